import { newId } from '../../common/ids'
import { parseWebhookRef } from '../../../storage/repositories/webhook-keys'
import { sendAttempt, type AttemptRequest } from '../protocol/attempt'
import { envelopeBytes } from '../protocol/batching'
import { createDeadlineTimer, type TimerClock } from './deadline-timer'
import { recordAfterAttempt } from './record'
import { attemptRecord } from './attempt-record'
import { retryDelay } from '../../../machines/webhook-delivery/retry'
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
import type { TakenBatch, WebhookFeed } from './webhook-feed'
import { StaleCursorError } from './stored-cursor'
import type { WorkLimit } from './work-limit'
import type { WebhookRecord } from '../configuration/model'
import type { CursorBatch } from '../../../storage/repositories/webhook-cursors'
import type { NamespaceEvent } from '../../events/schemas'
import type { DeliveryLeases } from './delivery-leases'
import type { TxPart } from '../../../storage/tx-part'
import { promiseActor } from './promise-actor'

interface AdapterDeps {
  runtime: WebhookRuntime
  clock: TimerClock
  /** The feed (buffer and batch in flight) of a webhook whose actor runs here. */
  feedOf: (ref: string) => WebhookFeed | null
  /** False once the host is shutting down: no new batch is taken or sent. */
  accepting: () => boolean
  /** Registers running work so shutdown and tests can wait for it. */
  track: <T>(work: Promise<T>) => Promise<T>
  /** Bounds the taking and recording steps of all actors in this process (work-limit.ts). */
  limit: WorkLimit
  /** The webhook leases of this process: checked before a take, extended over each attempt. */
  leases: Pick<DeliveryLeases, 'holds' | 'beginAttempt' | 'attemptLeft' | 'endAttempt'>
  /** The lease of a webhook is no longer surely this process's: its actor stops here at once. */
  leaseLost: (ref: string) => void
  /**
   * A write found the webhook's stored cursor other than this actor wrote it last: its state is
   * stale, so it stops here and the webhook is adopted again from what is stored.
   */
  cursorStale: (ref: string) => void
}

/** Raised in place of a take or send when the webhook's lease is lost (the actor is stopped meanwhile). */
export class LeaseLostError extends Error {
  constructor(ref: string) {
    super(`lease of webhook ${ref} lost: another process may deliver it now`)
    this.name = 'LeaseLostError'
  }
}

/** Stops the actor of `ref` here and fails its step: nothing may be taken or sent without the lease. */
function lost(deps: AdapterDeps, ref: string): never {
  deps.leaseLost(ref)
  throw new LeaseLostError(ref)
}

/** A promise that never settles: during shutdown the actor is persisted in front of the step instead. */
const parked = <T>() => new Promise<T>(() => undefined)

/**
 * The storage- and network-backed actors of the delivery machine: `takeBatch` reads the feed,
 * `deliverBatch` signs and sends one attempt and records it, `deadlineTimer` waits on the clock.
 * `takeAhead` starts an actor's take before the actor's own step (see its comment).
 * @example webhookDeliveryMachine.provide({ actors: createDeliveryActors(deps).actors })
 */
export function createDeliveryActors(deps: AdapterDeps) {
  const readAtTake: DocumentsReadAtTake = new Map()
  const sentAtTake: AttemptsSentAtTake = new Map()
  const takenAhead: TakesAhead = new Map()
  const attempt = (input: DeliverBatchInput) =>
    deps.track(retireWhenStale(deps, input.webhookId, deliver(deps, input, readAtTake)))
  const takeStep = (input: TakeBatchInput) =>
    deps.track(retireWhenStale(deps, input.webhookId, takeAndSend(deps, input, readAtTake, sentAtTake, attempt)))
  return {
    actors: {
      deadlineTimer: createDeadlineTimer(deps.clock),
      takeBatch: promiseActor<TakeBatchOutput, TakeBatchInput>(({ input }) => {
        const ahead = takenAhead.get(input.webhookId)
        takenAhead.delete(input.webhookId)
        // The take this step was told of is made already: this step is its outcome.
        if (ahead && ahead.feed === deps.feedOf(input.webhookId)) return ahead.output
        if (!deps.accepting()) return parked()
        return takeStep(input)
      }),
      deliverBatch: promiseActor<AttemptReport, DeliverBatchInput>(({ input }) => {
        if (!deps.accepting()) return parked()
        const sent = sentAtTake.get(input.webhookId)
        sentAtTake.delete(input.webhookId)
        // The take of this batch started its first attempt already: this step is its outcome.
        if (
          sent &&
          sent.feed === deps.feedOf(input.webhookId) &&
          sent.deliveryId === input.deliveryId &&
          input.attempt === 1
        )
          return sent.report
        // No wait for the actor's snapshot: the batch (delivery id and event ids) is in the stored
        // cursor since takeBatch, so a restart sends it again under the same webhook-id whichever
        // snapshot was stored last.
        return attempt(input)
      }),
    },
    /**
     * Makes the take that an actor at rest is about to start (`takeOnBuffered` in the machine's
     * policy), before the actor's step, and calls `tell` once it is made (and its first attempt
     * started): `tell` sends the actor the event it was held back from, and the `takeBatch` step
     * that event starts adopts this take instead of making another. When one event reaches 100
     * webhooks, each actor's step (three microsteps and a new `takeBatch` actor, about 70-100 µs
     * on a slow machine) ran at the hand-out, ahead of every take and every send of the burst;
     * now it runs after the requests are written. Nothing is decided differently: only an actor
     * that would take at once is taken ahead, and its step finds the same batch (the cursor's).
     * An actor that went elsewhere meanwhile (disabled in those milliseconds) keeps a batch taken
     * for its next `takeBatch` step, so that the attempt already made reaches it then.
     */
    takeAhead(input: TakeBatchInput, tell: () => void): void {
      const feed = deps.feedOf(input.webhookId)
      const output = feed && deps.accepting() ? takeStep(input) : null
      // A failed take reaches the actor through its step, as if the step had made it.
      void (output ?? Promise.resolve(null))
        .catch(() => null)
        .then((taken) => {
          if (output && feed) takenAhead.set(input.webhookId, { feed, output })
          try {
            tell()
          } finally {
            // Kept for a later step only by an actor still running here (`forget` ran for a retired one).
            if (!taken?.batch || deps.feedOf(input.webhookId) !== feed) takenAhead.delete(input.webhookId)
          }
        })
    },
    /**
     * The actor of `ref` was retired here: what its takes left for its next steps goes (a deleted
     * webhook's entries were otherwise kept for good; an actor adopted again has a feed of its own
     * and never used them).
     */
    forget(ref: string): void {
      takenAhead.delete(ref)
      sentAtTake.delete(ref)
      readAtTake.delete(ref)
    },
  }
}

/**
 * Takes made ahead of their actor's step, by webhook, until a `takeBatch` step of that actor (same
 * feed) adopts them: kept past the telling only with a batch taken.
 */
type TakesAhead = Map<string, { feed: WebhookFeed; output: Promise<TakeBatchOutput> }>

/**
 * First attempts started by their take, by webhook, until the actor's `deliverBatch` step takes
 * their outcome. Only this actor's own take counts (`feed`), as with `DocumentsReadAtTake`.
 */
type AttemptsSentAtTake = Map<string, { deliveryId: string; feed: WebhookFeed; report: Promise<AttemptReport> }>

/**
 * Takes the next batch and, when one was taken, starts its first attempt at once, before the
 * actor hears of the take: the machine goes from a taken batch straight to sending it
 * (`delivering.preparing` to `sending`, nothing else can happen in between), and it is the actor
 * steps in between that held the sends back. When one event reaches 100 webhooks, their takes'
 * replies arrive together and every step after them runs as one burst; the actors' steps (a
 * macrostep and a new `deliverBatch` actor each, about 40 µs) ran before the first request was
 * written, and the last of the 100 went out after all of them. Now the take's outcome reaches
 * the actor later (after the requests are written and no other take runs; see the end of this function).
 * `input.firstAttemptIsLast` is what the machine will say of this attempt (absent in a snapshot
 * stored before it existed: the attempt then waits for the machine, as before).
 */
async function takeAndSend(
  deps: AdapterDeps,
  input: TakeBatchInput,
  readAtTake: DocumentsReadAtTake,
  sentAtTake: AttemptsSentAtTake,
  attempt: (input: DeliverBatchInput) => Promise<AttemptReport>,
): Promise<TakeBatchOutput> {
  const output = await take(deps, input, readAtTake)
  const feed = deps.feedOf(input.webhookId)
  if (!output.batch || !feed || input.firstAttemptIsLast === undefined || !deps.accepting()) return output
  const report = attempt({
    webhookId: input.webhookId,
    deliveryId: output.batch.deliveryId,
    attempt: 1,
    eventIds: output.batch.eventIds,
    lastAttempt: input.firstAttemptIsLast,
  })
  // Observed by the actor's `deliverBatch` step; a rejection before it asks is not unhandled.
  report.catch(() => undefined)
  sentAtTake.set(input.webhookId, { deliveryId: output.batch.deliveryId, feed, report })
  // The actor hears of the take once no other take or send of this process runs or waits (as a
  // record waits): when a burst's take replies come in two reads, the actor steps of the first
  // part (about 70 µs each) ran ahead of the second part's sends, a 4-6 ms gap inside the burst's
  // requests. Then two turns: the request is written in a check-phase callback of its own (undici
  // checks an idle kept-alive connection for a close first, protocol/attempt.ts), queued in the
  // turn after this one's; the actor hears of the take after it.
  await deps.limit.urgentDone()
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
  return output
}

/**
 * A step whose cursor write found the cursor changed elsewhere fails, and its actor is retired: it
 * would otherwise retry the same write on its storage schedule (30 s, 120 s, ...) while renewing
 * its lease, so no process would deliver the webhook again.
 */
function retireWhenStale<T>(deps: AdapterDeps, ref: string, step: Promise<T>): Promise<T> {
  return step.catch((error: unknown) => {
    if (error instanceof StaleCursorError) deps.cursorStale(ref)
    throw error
  })
}

function feedOf(deps: AdapterDeps, ref: string): WebhookFeed {
  const feed = deps.feedOf(ref)
  if (!feed) throw new Error(`webhook ${ref} is not delivered by this process`)
  return feed
}

/**
 * The webhook document each actor's last take read, by actor: the first attempt of that batch,
 * which follows within milliseconds, sends with it instead of reading it again. Later attempts
 * read afresh, so an edit between retries (a new URL, secret or header) applies to the next one.
 * `extension`: the lease extension for that first attempt, sent with the take (see `takeNow`).
 */
type DocumentsReadAtTake = Map<
  string,
  { deliveryId: string; webhook: WebhookRecord; extension: Promise<number | null>; feed: WebhookFeed }
>

/**
 * How old a lease extension sent with the take may be when its attempt's request goes out: the
 * request is cut where the extension ends, so its timeout is this much shorter at most. Older
 * (a process starved between the take and the send), the attempt extends the lease afresh.
 */
const EXTENSION_SENT_AHEAD_MS = 100

function take(deps: AdapterDeps, input: TakeBatchInput, readAtTake: DocumentsReadAtTake): Promise<TakeBatchOutput> {
  return deps.limit.run(() => takeNow(deps, input, readAtTake), 'take')
}

async function takeNow(
  deps: AdapterDeps,
  input: TakeBatchInput,
  readAtTake: DocumentsReadAtTake,
): Promise<TakeBatchOutput> {
  const feed = feedOf(deps, input.webhookId)
  const { ns, id } = parseWebhookRef(input.webhookId)
  // A take writes the webhook's cursor: only while the lease is surely still ours.
  if (!deps.leases.holds(input.webhookId)) lost(deps, input.webhookId)
  // The lease extension of the batch's first attempt goes out with the take, in the same pipeline
  // flush: sent right before the request, it was one more round trip between the take and the
  // send, and at light load the first receipt of an event waited for that wave of all 100
  // webhooks. Unused (nothing taken, disabled, a failure), it is ended before this step returns,
  // so its end is sent before any later extension of this lease.
  const extension = deps.leases.beginAttempt(input.webhookId)
  extension.catch(() => undefined)
  readAtTake.delete(input.webhookId)
  let taken: TakenBatch | null
  let webhook: WebhookRecord | null | undefined
  try {
    taken = await feed.take(() => newId('whdel', deps.clock.now()))
    // A new batch's write read the document as it was then (webhook-feed.ts); a batch in flight
    // from before, or none, needs it read here. A disabled webhook sends nothing until it is enabled
    // (or deleted): a batch taken for a webhook found disabled stays in its cursor, counted as
    // buffered, and is the first sent once the webhook is enabled again.
    webhook = taken?.webhook !== undefined ? taken.webhook : await deps.runtime.webhooks.get(ns, id)
  } catch (error) {
    await endUnused(deps, input.webhookId, extension)
    throw error
  }
  if (webhook && !webhook.enabled) {
    await endUnused(deps, input.webhookId, extension)
    return { batch: null, disabled: true, bufferedEvents: feed.buffered(), now: deps.clock.now() }
  }
  const batch = taken ? { deliveryId: taken.batch.deliveryId, eventIds: taken.batch.eventIds } : null
  // Kept only for an actor still running here: one retired during the take was forgotten already.
  if (batch && webhook && deps.feedOf(input.webhookId) === feed)
    readAtTake.set(input.webhookId, { deliveryId: batch.deliveryId, webhook, extension, feed })
  else await endUnused(deps, input.webhookId, extension)
  return { batch, bufferedEvents: feed.buffered(), now: deps.clock.now() }
}

/**
 * A lease extension sent for an attempt that will not be made: the lease returns to its normal
 * time (sent now, before any later extension). Lost meanwhile, the actor stops here.
 */
async function endUnused(deps: AdapterDeps, ref: string, extension: Promise<number | null>): Promise<void> {
  const left = await extension.catch(() => undefined)
  if (left === null) deps.leaseLost(ref)
  else void deps.track(deps.leases.endAttempt(ref))
}

const noSend = (error: string): AttemptOutcome => ({
  kind: 'success',
  responseStatus: 0,
  responseBody: '',
  error,
  durationMillis: 0,
})

/** What an attempt needs once its batch was read and signed. */
interface PreparedAttempt {
  webhook: WebhookRecord
  inFlight: { batch: CursorBatch; events: NamespaceEvent[] }
  startedAt: number
  request: AttemptRequest
}

/**
 * One attempt: reading and signing, then recording, each count against the work limit; the
 * request itself does not, so slow receivers never hold up the others.
 */
async function deliver(
  deps: AdapterDeps,
  input: DeliverBatchInput,
  readAtTake: DocumentsReadAtTake,
): Promise<AttemptReport> {
  const kept = readAtTake.get(input.webhookId)
  readAtTake.delete(input.webhookId)
  // Only this actor's own take counts: one retired between its take and its attempt (lease lapsed,
  // cursor stale) left its entry, and the actor adopted after it has a feed of its own.
  const taken = kept && kept.feed === deps.feedOf(input.webhookId) ? kept : undefined
  const fromTake = input.attempt === 1 && taken?.deliveryId === input.deliveryId ? taken : undefined
  // An extension sent with a take this attempt does not follow (a batch of before) is ended.
  if (taken && !fromTake) await endUnused(deps, input.webhookId, taken.extension)
  // The first attempt of a batch just taken has everything in memory: it goes out at once. Queued
  // for a slot, it waited for the next wave of takes to finish (a take ends, its slot goes to the
  // next take before this step is even asked for), which put tens of ms between a take and its send.
  let prepared: PreparedAttempt | { report: AttemptReport }
  try {
    prepared = fromTake
      ? await prepare(deps, input, fromTake.webhook)
      : await deps.limit.run(() => prepare(deps, input, undefined), 'send')
  } catch (error) {
    if (fromTake) await endUnused(deps, input.webhookId, fromTake.extension)
    throw error
  }
  if ('report' in prepared) {
    if (fromTake) await endUnused(deps, input.webhookId, fromTake.extension)
    return prepared.report
  }
  // The fence: the lease is checked and extended over the attempt right before the request goes
  // out (or was, with the take, within EXTENSION_SENT_AHEAD_MS), and the request is cut where the
  // extension ends (less one lease time; delivery-leases.ts).
  const left = await attemptWindow(deps, input.webhookId, fromTake?.extension)
  if (left === null) lost(deps, input.webhookId)
  let outcome: AttemptOutcome
  try {
    outcome = await sendAttempt({ ...prepared.request, timeoutMs: Math.min(prepared.request.timeoutMs, left) })
  } finally {
    void deps.track(deps.leases.endAttempt(input.webhookId))
  }
  return deps.limit.run(() => record(deps, input, prepared, outcome), 'record')
}

/**
 * The milliseconds the attempt's request may stay open: under the extension sent with the take
 * when it is recent enough, otherwise under one sent now. Null: the lease is lost.
 */
async function attemptWindow(
  deps: AdapterDeps,
  ref: string,
  sentAhead: Promise<number | null> | undefined,
): Promise<number | null> {
  if (sentAhead) {
    if ((await sentAhead) === null) return null
    const left = deps.leases.attemptLeft(ref, EXTENSION_SENT_AHEAD_MS)
    if (left !== null) return left
  }
  return deps.leases.beginAttempt(ref)
}

async function prepare(
  deps: AdapterDeps,
  input: DeliverBatchInput,
  /** The document the take of this batch read just now; read afresh when absent. */
  document: WebhookRecord | undefined,
): Promise<PreparedAttempt | { report: AttemptReport }> {
  const { runtime, clock } = deps
  const { ns, id } = parseWebhookRef(input.webhookId)
  const feed = feedOf(deps, input.webhookId)
  const [webhook, inFlight] = await Promise.all([
    document ?? runtime.webhooks.get(ns, id),
    feed.batch(input.deliveryId),
  ])
  const startedAt = clock.now()
  // Deleted webhook, or a batch already done (or past the log's retention): nothing left to send.
  if (!webhook || !inFlight || inFlight.events.length === 0) {
    if (webhook) await feed.complete(input.deliveryId)
    return {
      report: {
        outcome: noSend(webhook ? 'batch already delivered' : 'webhook deleted'),
        startedAt,
        finishedAt: startedAt,
      },
    }
  }
  // Built once as bytes: the signature and the request both take them (as a string, each encoded
  // it again, and the content-length measured it a third time: 80 KB each for a full batch).
  const body = await envelopeBytes(inFlight.events)
  const timestamp = Math.floor(startedAt / 1000)
  const headers = {
    // Custom headers first: validation refuses webhook-* names, and the sender's own win regardless.
    ...webhook.headers,
    'webhook-id': input.deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(signingSecrets(webhook, startedAt), input.deliveryId, timestamp, body),
  }
  const request: AttemptRequest = {
    url: webhook.url,
    body,
    headers,
    timeoutMs: runtime.settings.attemptTimeoutMs,
    settings: runtime.settings,
    lookup: runtime.lookup,
  }
  return { webhook, inFlight, startedAt, request }
}

async function record(
  deps: AdapterDeps,
  input: DeliverBatchInput,
  { inFlight, startedAt }: PreparedAttempt,
  outcome: AttemptOutcome,
): Promise<AttemptReport> {
  const { runtime, clock } = deps
  const { ns, id } = parseWebhookRef(input.webhookId)
  const feed = feedOf(deps, input.webhookId)
  const events = inFlight.events
  const finishedAt = clock.now()
  const ok = outcome.kind === 'success'
  const status = ok ? 'success' : input.lastAttempt ? 'failed' : 'retrying'
  // The machine schedules the retry with the same function (policy.ts retryDelayAfter); the record needs it now.
  const delay = status === 'retrying' ? retryDelay(input.attempt, outcome, runtime.settings.retryScheduleMs) : null
  const nextAttemptAt = delay === null ? null : finishedAt + delay
  const attempt = attemptRecord({ attempt: input.attempt, outcome, startedAt, nextAttemptAt })
  // One transaction: the record, its attempt and the metrics, and (when the batch is done) the
  // cursor moving past it. A crash before it re-sends the batch, never loses it.
  const save = (alongside?: TxPart<unknown>) =>
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
          source: { eventIds: inFlight.batch.eventIds, after: inFlight.batch.after, last: inFlight.batch.last },
          outcome,
          startedAt,
          finishedAt,
        }),
      {
        attempt,
        metrics: {
          at: finishedAt,
          delta: {
            deliveriesSuccess: ok ? 1 : 0,
            deliveriesFailed: ok ? 0 : 1,
            eventsSent: ok ? events.length : 0,
            eventsDropped: status === 'failed' ? events.length : 0,
            totalDeliveryMillis: outcome.durationMillis,
          },
        },
        // A failed delivery stays within `recover`'s reach beyond the records kept.
        mayFail: status === 'failed',
        firstAttempt: input.attempt === 1,
        alongside,
      },
    )
  if (status === 'retrying') await save()
  else await feed.complete(input.deliveryId, save)
  return { outcome, startedAt, finishedAt, bufferedEvents: feed.buffered() }
}
