import { createActor, fromPromise, type Actor, type Snapshot } from 'xstate'
import { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine'
import { createDeadlineTimer, type TimerClock } from '../../server/webhooks/delivery/deadline-timer'
import { ManualClock } from '../support/manual-clock'
import type {
  AttemptOutcome,
  AttemptReport,
  DeliverBatchInput,
  DeliveryEmitted,
  DeliverySettings,
  TakeBatchInput,
  TakeBatchOutput,
  WebhookActorSettings,
} from '../../machines/webhook-delivery/types'

/** A manual clock; `advanceTo` fires timers one deadline at a time and lets promises settle in between. */
export class FakeClock extends ManualClock {
  /** Moves time forward to `time`, firing every timer due on the way in order. */
  async advanceTo(time: number): Promise<void> {
    await settle()
    while (this.fireNext(time)) await settle()
    this.current = Math.max(this.current, time)
    await settle()
  }
  advanceBy(ms: number): Promise<void> {
    return this.advanceTo(this.current + ms)
  }
}

/** Lets pending promise callbacks (promise actors, raised events) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
}

export type ScriptedResponse = Partial<AttemptOutcome> & { status?: number }

export interface AttemptCall extends DeliverBatchInput {
  at: number
}

export const TEST_SETTINGS: DeliverySettings = {
  retryScheduleMs: [30_000, 120_000, 600_000, 1_800_000, 3_600_000],
  quarantineMs: 24 * 3_600_000,
  rate: 5,
  backlogNoticeThreshold: 1000,
}

/**
 * An in-memory stand-in for storage and the receiver: a buffer of event ids, batches of
 * `batchSize`, and scripted responses (default 200) for successive attempts.
 */
export class DeliveryHarness {
  buffer: string[] = []
  calls: AttemptCall[] = []
  emitted: DeliveryEmitted[] = []
  responses: ScriptedResponse[] = []
  batchSize = 100
  /** The webhook document says disabled: takeBatch takes nothing. */
  disabled = false
  /** When set, attempts wait on it before answering (an attempt "in flight"). */
  gate: Promise<void> | null = null
  private eventSeq = 0
  private deliverySeq = 0
  actor!: Actor<typeof webhookDeliveryMachine>

  constructor(
    readonly clock: TimerClock & { advanceTo?: (t: number) => Promise<void> },
    readonly settings: DeliverySettings = TEST_SETTINGS,
  ) {}

  /** The machine with in-memory actors bound to this harness. */
  machine() {
    return webhookDeliveryMachine.provide({
      actors: {
        deadlineTimer: createDeadlineTimer(this.clock),
        takeBatch: fromPromise<TakeBatchOutput, TakeBatchInput>(async () => {
          if (this.disabled)
            return { batch: null, disabled: true, bufferedEvents: this.buffer.length, now: this.clock.now() }
          const eventIds = this.buffer.slice(0, this.batchSize)
          const batch = eventIds.length ? { deliveryId: `whdel-${++this.deliverySeq}`, eventIds } : null
          return { batch, bufferedEvents: this.buffer.length, now: this.clock.now() }
        }),
        deliverBatch: fromPromise<AttemptReport, DeliverBatchInput>(async ({ input }) => this.attempt(input)),
      },
    })
  }

  /** Starts (or restores, with `snapshot`) the actor and records what it emits. */
  start(snapshot?: Snapshot<unknown>) {
    const actor = createActor(this.machine(), {
      input: { webhookId: 'wh-1', now: this.clock.now(), settings: this.settings, bufferedEvents: this.buffer.length },
      ...(snapshot ? { snapshot } : {}),
    })
    actor.on('*', (event) => this.emitted.push(event as DeliveryEmitted))
    this.actor = actor
    actor.start()
    return actor
  }

  /** Appends `count` events to storage and tells the machine. */
  append(count: number): void {
    for (let i = 0; i < count; i++) this.buffer.push(`evt-${++this.eventSeq}`)
    this.actor.send({ type: 'EVENTS_BUFFERED', bufferedEvents: this.buffer.length, now: this.clock.now() })
  }

  /** The webhook document's own settings changed (the host's `documentChanges`). */
  changeSettings(settings: WebhookActorSettings): void {
    this.actor.send({ type: 'SETTINGS_CHANGED', settings, now: this.clock.now() })
  }

  state(): string {
    const value = this.actor.getSnapshot().value
    return typeof value === 'string' ? value : Object.keys(value)[0]
  }

  private async attempt(input: DeliverBatchInput): Promise<AttemptReport> {
    const at = this.clock.now()
    this.calls.push({ ...input, at })
    if (this.gate) await this.gate
    const scripted = this.responses.shift() ?? {}
    const status = scripted.status ?? scripted.responseStatus ?? 200
    const ok = status >= 200 && status < 300
    const outcome: AttemptOutcome = {
      kind: ok ? 'success' : 'failure',
      responseStatus: status,
      responseBody: scripted.responseBody ?? '',
      durationMillis: 0,
      ...(scripted.retryAfterMs === undefined ? {} : { retryAfterMs: scripted.retryAfterMs }),
    }
    // Storage drops the batch from the buffer once it is final: delivered, or out of attempts.
    if (ok || input.lastAttempt) this.buffer = this.buffer.filter((id) => !input.eventIds.includes(id))
    return {
      outcome,
      startedAt: at,
      finishedAt: this.clock.now(),
      bufferedEvents: this.buffer.length,
    }
  }
}
