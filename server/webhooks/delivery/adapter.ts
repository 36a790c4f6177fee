import { fromPromise } from 'xstate'
import { newId } from '../../common/ids'
import { parseWebhookRef } from '../../../storage/repositories/webhook-keys'
import { sendAttempt } from '../protocol/attempt'
import { envelope } from '../protocol/batching'
import { createDeadlineTimer, type TimerClock } from './deadline-timer'
import { recordAfterAttempt } from './record'
import { attemptRecord } from './attempt-record'
import { applicableRetryAfter, nextDelay } from '../../../machines/webhook-delivery/retry'
import type {
  AttemptOutcome,
  AttemptReport,
  DeliverBatchInput,
  TakeBatchInput,
  TakeBatchOutput,
} from '../../../machines/webhook-delivery/types'
import { signingSecrets } from '../configuration/model'
import type { WebhookRuntime } from './runtime'
import { signatureHeader } from '../protocol/signing'
import type { WebhookFeed } from './webhook-feed'

export interface AdapterDeps {
  runtime: WebhookRuntime
  clock: TimerClock
  /** Resolves once the actor's latest snapshot is stored (called before a batch's bytes go out). */
  beforeSend: (ref: string) => Promise<void>
  /** The feed (buffer and batch in flight) of a webhook whose actor runs here. */
  feedOf: (ref: string) => WebhookFeed | null
  /** False once the host is shutting down: no new batch is taken or sent. */
  accepting: () => boolean
  /** Registers running work so shutdown and tests can wait for it. */
  track: <T>(work: Promise<T>) => Promise<T>
}

/** A promise that never settles: during shutdown the actor is persisted in front of the step instead. */
const parked = <T>() => new Promise<T>(() => undefined)

/**
 * The storage- and network-backed actors of the delivery machine: `takeBatch` reads the feed,
 * `deliverBatch` signs and sends one attempt and records it, `deadlineTimer` waits on the clock.
 * @example webhookDeliveryMachine.provide({ actors: createDeliveryActors(deps) })
 */
export function createDeliveryActors(deps: AdapterDeps) {
  return {
    deadlineTimer: createDeadlineTimer(deps.clock),
    takeBatch: fromPromise<TakeBatchOutput, TakeBatchInput>(({ input }) => {
      if (!deps.accepting()) return parked()
      return deps.track(take(deps, input))
    }),
    deliverBatch: fromPromise<AttemptReport, DeliverBatchInput>(({ input }) => {
      if (!deps.accepting()) return parked()
      const work = deps.track(
        (async () => {
          // The batch (delivery id and event ids) is stored before its first byte goes out.
          await deps.beforeSend(input.webhookId)
          return deps.accepting() ? deliver(deps, input) : PARK
        })(),
      )
      return work.then((report) => (report === PARK ? parked<AttemptReport>() : report))
    }),
  }
}

const PARK = Symbol('park')

function feedOf(deps: AdapterDeps, ref: string): WebhookFeed {
  const feed = deps.feedOf(ref)
  if (!feed) throw new Error(`webhook ${ref} is not delivered by this process`)
  return feed
}

async function take(deps: AdapterDeps, input: TakeBatchInput): Promise<TakeBatchOutput> {
  const feed = feedOf(deps, input.webhookId)
  // A disabled webhook stops draining: nothing leaves its buffer until it is enabled (or deleted).
  const { ns, id } = parseWebhookRef(input.webhookId)
  const webhook = await deps.runtime.webhooks.get(ns, id)
  if (webhook && !webhook.enabled)
    return { batch: null, disabled: true, bufferedEvents: feed.buffered(), now: deps.clock.now() }
  const taken = await feed.take(() => newId('whdel', deps.clock.now()))
  const batch = taken ? { deliveryId: taken.batch.deliveryId, eventIds: taken.batch.eventIds } : null
  return { batch, bufferedEvents: feed.buffered(), now: deps.clock.now() }
}

const noSend = (error: string): AttemptOutcome => ({
  kind: 'success',
  responseStatus: 0,
  responseBody: '',
  error,
  durationMillis: 0,
})

async function deliver(deps: AdapterDeps, input: DeliverBatchInput): Promise<AttemptReport> {
  const { runtime, clock } = deps
  const { ns, id } = parseWebhookRef(input.webhookId)
  const feed = feedOf(deps, input.webhookId)
  const [webhook, inFlight] = await Promise.all([runtime.webhooks.get(ns, id), feed.batch(input.deliveryId)])
  const events = inFlight?.events ?? []
  const startedAt = clock.now()
  // Deleted webhook, or a batch already done (or past the log's retention): nothing left to send.
  if (!webhook || events.length === 0) {
    if (webhook) await feed.complete(input.deliveryId)
    return {
      outcome: noSend(webhook ? 'batch already delivered' : 'webhook deleted'),
      startedAt,
      finishedAt: startedAt,
    }
  }
  const { body } = envelope(events)
  const timestamp = Math.floor(startedAt / 1000)
  const headers = {
    // Custom headers first: validation refuses webhook-* names, and the sender's own win regardless.
    ...webhook.headers,
    'webhook-id': input.deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(signingSecrets(webhook, startedAt), input.deliveryId, timestamp, body),
  }
  const outcome = await sendAttempt({
    url: webhook.url,
    body,
    headers,
    timeoutMs: runtime.settings.attemptTimeoutMs,
    settings: runtime.settings,
    lookup: runtime.lookup,
  })
  const finishedAt = clock.now()
  const ok = outcome.kind === 'success'
  const status = ok ? 'success' : input.lastAttempt ? 'failed' : 'retrying'
  // The machine schedules the retry with the same pure policy (policy.ts retryDelayAfter); the record needs it now.
  const retryDelay =
    status === 'retrying'
      ? nextDelay(
          input.attempt,
          runtime.settings.retryScheduleMs,
          applicableRetryAfter(outcome.responseStatus, outcome.retryAfterMs),
        )
      : null
  const nextAttemptAt = retryDelay === null ? null : finishedAt + retryDelay
  const attempt = attemptRecord({ attempt: input.attempt, outcome, startedAt, nextAttemptAt })
  // Record and metrics first, then drop the batch: a crash in between re-sends, never loses.
  await Promise.all([
    runtime.records.saveDelivery(
      ns,
      id,
      input.deliveryId,
      (previous) =>
        recordAfterAttempt(previous, {
          webhook: id,
          deliveryId: input.deliveryId,
          attempt: input.attempt,
          status,
          events,
          source: { eventIds: inFlight!.batch.eventIds, after: inFlight!.batch.after, last: inFlight!.batch.last },
          outcome,
          startedAt,
          finishedAt,
        }),
      attempt,
    ),
    runtime.records.addMetrics(ns, id, finishedAt, {
      deliveriesSuccess: ok ? 1 : 0,
      deliveriesFailed: ok ? 0 : 1,
      eventsSent: ok ? events.length : 0,
      eventsDropped: status === 'failed' ? events.length : 0,
      totalDeliveryMillis: outcome.durationMillis,
    }),
  ])
  if (status !== 'retrying') await feed.complete(input.deliveryId)
  return { outcome, startedAt, finishedAt, bufferedEvents: feed.buffered(), rateLimit: webhook.rateLimit ?? null }
}
