import { assign, emit, enqueueActions, fromCallback, fromPromise, setup } from 'xstate'
import type {
  AttemptReport,
  DeadlineInput,
  DeliverBatchInput,
  DeliveryContext,
  DeliveryEmitted,
  DeliveryEvent,
  DeliveryMachineInput,
  TakeBatchInput,
  TakeBatchOutput,
} from './webhook-delivery/types'
import {
  failedAttemptReport,
  mustPace,
  pacingDeadline,
  remainingAfterBatch,
  retryDelayAfter,
  takeBatchInput,
} from './webhook-delivery/policy'
import { maxAttempts } from './webhook-delivery/retry'

/**
 * One actor per webhook: takes batches oldest first, one in flight, retries on the schedule,
 * paces to `rate` attempts per second and quarantines after retry exhaustion.
 *
 * Pure definition: the buffer lives in storage, time arrives on events and actor outputs, and
 * every wait is the `deadlineTimer` actor invoked with an absolute deadline kept in context, so a
 * snapshot restored later resumes the wait with only the remaining time (XState does not restore
 * `after` timers). Provide `takeBatch`, `deliverBatch` and `deadlineTimer` with `.provide()`.
 */

const notProvided = (name: string) => () => {
  throw new Error(`webhook delivery machine: actor "${name}" must be provided`)
}

/**
 * While waiting or sending, disabling or enabling only takes note: `dispatching` acts on it once
 * the wait or the attempt ends. (Per state rather than on the root, which the diagrams draw from.)
 */
const NOTE_ENABLED_CHANGES = {
  DISABLED: { actions: ['noteTime', 'markDisabled'] },
  ENABLED: { actions: ['noteTime', 'markEnabled'] },
} as const

/** The webhook's own settings are taken in whatever the state: the next decision follows them. */
const FOLLOW_SETTINGS = { SETTINGS_CHANGED: { actions: 'followSettings' } } as const

/**
 * The attempt that ended `sending`: `deliverBatch`'s output, or a crashed adapter's error as a
 * failed attempt. The transitions take it from the actor's outcome itself (a raised event in
 * between cost a microstep per delivery).
 */
function attemptOf(
  context: DeliveryContext,
  event: { type: string; output?: unknown; error?: unknown },
): AttemptReport {
  if (event.type.startsWith('xstate.error.actor.')) return failedAttemptReport(event.error, context.now)
  return event.output as AttemptReport
}

/** Where an attempt's outcome leads. */
const AFTER_SUCCESS = {
  target: '#webhookDelivery.dispatching',
  actions: ['recordAttempt', 'clearRetry', 'reportAttempt', 'recordSuccess', 'clearBatch'],
} as const
const AFTER_FAILURE = [
  {
    guard: 'hasAttemptsLeft',
    target: '#webhookDelivery.retrying',
    actions: ['scheduleRetry', 'recordAttempt', 'reportAttempt'],
  },
  {
    target: '#webhookDelivery.quarantined',
    actions: [
      'recordAttempt',
      'clearRetry',
      'reportAttempt',
      'recordFailure',
      'clearBatch',
      'enterQuarantine',
      'reportQuarantine',
    ],
  },
] as const

/**
 * What the delivery actor emits (records, metrics and system events are written from these at
 * the edge), as pure functions of its context. The machine's emit actions call them.
 */

type Emitted<T extends DeliveryEmitted['type']> = Extract<DeliveryEmitted, { type: T }>

/** What a delivery's outcome names: the webhook, the batch in flight and its attempts. */
const ofBatch = (context: DeliveryContext) => ({
  webhookId: context.webhookId,
  deliveryId: context.batch!.deliveryId,
  attempts: context.batch!.attempts,
})

/** The batch in flight is delivered. */
function succeeded(context: DeliveryContext): Emitted<'delivery.succeeded'> {
  return { type: 'delivery.succeeded', ...ofBatch(context), eventIds: context.batch!.eventIds }
}

/** The batch in flight failed for good: its events are dropped. */
function failed(context: DeliveryContext): Emitted<'delivery.failed'> {
  return { type: 'delivery.failed', ...ofBatch(context), droppedEvents: context.batch!.eventIds }
}

/** One record per attempt, after the attempt was counted and any retry scheduled. */
function attempted(context: DeliveryContext, report: AttemptReport): Emitted<'delivery.attempted'> {
  const batch = context.batch!
  const status = report.outcome.kind === 'success' ? 'success' : context.nextAttemptAt === null ? 'failed' : 'retrying'
  return {
    type: 'delivery.attempted',
    webhookId: context.webhookId,
    deliveryId: batch.deliveryId,
    attempt: batch.attempts,
    status,
    eventIds: batch.eventIds,
    report,
    nextAttemptAt: context.nextAttemptAt,
  }
}

function quarantined(context: DeliveryContext): Emitted<'webhook.quarantined'> {
  return { type: 'webhook.quarantined', webhookId: context.webhookId, quarantinedUntil: context.quarantinedUntil! }
}

/** Released by the API (`RELEASE`) or because the quarantine ran out. */
function released(context: DeliveryContext, event: DeliveryEvent): Emitted<'webhook.released'> {
  return {
    type: 'webhook.released',
    webhookId: context.webhookId,
    reason: event.type === 'RELEASE' ? 'manual' : 'expired',
    now: context.now,
  }
}

/** The webhook delivery machine; see the file comment for what must be provided. */
export const webhookDeliveryMachine = setup({
  types: {
    context: {} as DeliveryContext,
    events: {} as DeliveryEvent,
    input: {} as DeliveryMachineInput,
    emitted: {} as DeliveryEmitted,
  },
  actors: {
    takeBatch: fromPromise<TakeBatchOutput, TakeBatchInput>(notProvided('takeBatch')),
    deliverBatch: fromPromise<AttemptReport, DeliverBatchInput>(notProvided('deliverBatch')),
    deadlineTimer: fromCallback<{ type: 'noop' }, DeadlineInput>(notProvided('deadlineTimer')),
  },
  guards: {
    hasBacklog: ({ context }) => context.bufferedEvents > 0,
    reportsBacklog: ({ event }) => (event as Extract<DeliveryEvent, { type: 'EVENTS_BUFFERED' }>).bufferedEvents > 0,
    isDisabled: ({ context }) => context.disabled === true,
    takeFoundDisabled: ({ event }) => (event as unknown as { output: TakeBatchOutput }).output.disabled === true,
    hasBatch: ({ context }) => context.batch !== null,
    isIdle: ({ context }) => context.batch === null && context.bufferedEvents <= 0,
    mustPace: ({ context }) => mustPace(context),
    hasAttemptsLeft: ({ context, event }) => retryDelayAfter(context, attemptOf(context, event)) !== null,
    attemptSucceeded: ({ context, event }) => attemptOf(context, event).outcome.kind === 'success',
    batchTaken: ({ event }) => (event as unknown as { output: TakeBatchOutput }).output.batch !== null,
  },
  actions: {
    noteBuffered: assign(({ context, event }) => {
      const { bufferedEvents, now } = event as Extract<DeliveryEvent, { type: 'EVENTS_BUFFERED' }>
      const small = bufferedEvents <= context.settings.backlogNoticeThreshold
      return {
        bufferedEvents,
        now: Math.max(context.now, now),
        rateLimitedNoticeSent: small ? false : context.rateLimitedNoticeSent,
      }
    }),
    noteTime: assign({ now: ({ context, event }) => Math.max(context.now, (event as { now: number }).now) }),
    followSettings: assign(({ context, event }) => {
      const { settings, now } = event as Extract<DeliveryEvent, { type: 'SETTINGS_CHANGED' }>
      return { ...settings, now: Math.max(context.now, now) }
    }),
    markDisabled: assign({ disabled: true }),
    markEnabled: assign({ disabled: false }),
    noteTakeRefused: assign(({ context, event }) => {
      const output = (event as unknown as { output: TakeBatchOutput }).output
      return { now: Math.max(context.now, output.now), bufferedEvents: output.bufferedEvents, disabled: true }
    }),
    startBatch: assign(({ context, event }) => {
      const output = (event as unknown as { output: TakeBatchOutput }).output
      return {
        now: Math.max(context.now, output.now),
        bufferedEvents: output.bufferedEvents,
        batch: output.batch && { ...output.batch, attempts: 0, createdAt: output.now },
      }
    }),
    noteEmptyBuffer: assign(({ context, event }) => {
      const output = (event as unknown as { output: TakeBatchOutput }).output
      // Nothing to take means nothing buffered, whatever the count said; avoids a take loop.
      return { now: Math.max(context.now, output.now), bufferedEvents: 0 }
    }),
    /** Counts the attempt, keeps its outcome and its start for pacing. */
    recordAttempt: assign(({ context, event }) => {
      const report = attemptOf(context, event)
      const batch = context.batch!
      return {
        now: Math.max(context.now, report.finishedAt),
        batch: { ...batch, attempts: batch.attempts + 1 },
        lastOutcome: report.outcome,
        recentStarts: [...context.recentStarts, report.startedAt].slice(-context.settings.rate),
      }
    }),
    recordSuccess: emit(({ context }) => succeeded(context)),
    recordFailure: emit(({ context }) => failed(context)),
    /** One record per attempt, emitted after `recordAttempt` and any scheduling. */
    reportAttempt: emit(({ context, event }) => attempted(context, attemptOf(context, event))),
    scheduleRetry: assign({
      nextAttemptAt: ({ context, event }) => {
        const report = attemptOf(context, event)
        return report.finishedAt + retryDelayAfter(context, report)!
      },
    }),
    /** Waiting on storage trouble uses the first retry delay; nothing was sent yet. */
    scheduleStorageRetry: assign({
      nextAttemptAt: ({ context }) => context.now + (context.settings.retryScheduleMs[0] ?? 0),
    }),
    clearRetry: assign({ nextAttemptAt: null }),
    clearBatch: assign(({ context, event }) => {
      const bufferedEvents = remainingAfterBatch(context, attemptOf(context, event))
      const small = bufferedEvents <= context.settings.backlogNoticeThreshold
      return { bufferedEvents, batch: null, rateLimitedNoticeSent: small ? false : context.rateLimitedNoticeSent }
    }),
    enterQuarantine: assign({ quarantinedUntil: ({ context }) => context.now + context.settings.quarantineMs }),
    reportQuarantine: emit(({ context }) => quarantined(context)),
    leaveQuarantine: assign({ quarantinedUntil: null }),
    reportRelease: emit(({ context, event }) => released(context, event)),
    schedulePacing: assign({
      pacedUntil: ({ context }) => pacingDeadline(context),
    }),
    clearPacing: assign({ pacedUntil: null }),
    /** Pacing against a large backlog is reported once per backlog episode. */
    reportRateLimited: enqueueActions(({ context, enqueue }) => {
      if (context.rateLimitedNoticeSent || context.bufferedEvents <= context.settings.backlogNoticeThreshold) return
      enqueue.assign({ rateLimitedNoticeSent: true })
      enqueue.emit({
        type: 'webhook.rate_limited',
        webhookId: context.webhookId,
        bufferedEvents: context.bufferedEvents,
        now: context.now,
      })
    }),
  },
}).createMachine({
  id: 'webhookDelivery',
  context: ({ input }) => ({
    webhookId: input.webhookId,
    settings: input.settings,
    now: input.now,
    bufferedEvents: input.bufferedEvents ?? 0,
    batch: null,
    nextAttemptAt: null,
    pacedUntil: null,
    quarantinedUntil: null,
    recentStarts: [],
    rateLimit: null,
    lastOutcome: null,
    rateLimitedNoticeSent: false,
    disabled: false,
  }),
  initial: 'active',
  states: {
    /** Idle: nothing buffered. */
    active: {
      always: { guard: 'hasBacklog', target: 'dispatching' },
      on: {
        // Straight to deciding (one microstep instead of this and then `always`).
        EVENTS_BUFFERED: [
          { guard: 'reportsBacklog', target: 'dispatching', actions: 'noteBuffered' },
          { actions: 'noteBuffered' },
        ],
        DISABLED: { target: 'disabled', actions: ['noteTime', 'markDisabled'] },
        ENABLED: { actions: ['noteTime', 'markEnabled'] },
        ...FOLLOW_SETTINGS,
      },
    },
    /** The webhook is disabled: buffered events (and a batch waiting for its retry) stay until it is enabled or deleted. */
    disabled: {
      on: {
        EVENTS_BUFFERED: { actions: 'noteBuffered' },
        ENABLED: { target: 'dispatching', actions: ['noteTime', 'markEnabled'] },
        DISABLED: { actions: ['noteTime', 'markDisabled'] },
        ...FOLLOW_SETTINGS,
      },
    },
    /** Transient: decides what comes next whenever a wait or an attempt ends. */
    dispatching: {
      always: [
        { guard: 'isDisabled', target: 'disabled' },
        { guard: 'isIdle', target: 'active' },
        { guard: 'mustPace', target: 'pacing', actions: 'schedulePacing' },
        { guard: 'hasBatch', target: 'delivering.sending' },
        { target: 'delivering.preparing' },
      ],
    },
    /** Waiting until `pacedUntil` to stay within `rate` attempts per second. */
    pacing: {
      entry: 'reportRateLimited',
      invoke: { src: 'deadlineTimer', input: ({ context }) => ({ deadline: context.pacedUntil! }) },
      on: {
        EVENTS_BUFFERED: { actions: 'noteBuffered' },
        DEADLINE_REACHED: { target: 'dispatching', actions: ['noteTime', 'clearPacing'] },
        ...NOTE_ENABLED_CHANGES,
        ...FOLLOW_SETTINGS,
      },
    },
    /** One batch in flight. */
    delivering: {
      initial: 'preparing',
      on: { EVENTS_BUFFERED: { actions: 'noteBuffered' }, ...NOTE_ENABLED_CHANGES, ...FOLLOW_SETTINGS },
      states: {
        preparing: {
          invoke: {
            src: 'takeBatch',
            input: ({ context }) => takeBatchInput(context),
            onDone: [
              { guard: 'takeFoundDisabled', target: '#webhookDelivery.disabled', actions: 'noteTakeRefused' },
              { guard: 'batchTaken', target: 'sending', actions: 'startBatch' },
              { target: '#webhookDelivery.active', actions: 'noteEmptyBuffer' },
            ],
            onError: { target: '#webhookDelivery.retrying', actions: 'scheduleStorageRetry' },
          },
        },
        sending: {
          invoke: {
            src: 'deliverBatch',
            input: ({ context }) => ({
              webhookId: context.webhookId,
              deliveryId: context.batch!.deliveryId,
              attempt: context.batch!.attempts + 1,
              eventIds: context.batch!.eventIds,
              lastAttempt: context.batch!.attempts + 1 >= maxAttempts(context.settings.retryScheduleMs),
            }),
            onDone: [{ guard: 'attemptSucceeded', ...AFTER_SUCCESS }, ...AFTER_FAILURE],
            onError: [...AFTER_FAILURE],
          },
        },
      },
    },
    /** Waiting until `nextAttemptAt` before retrying the same batch. */
    retrying: {
      invoke: { src: 'deadlineTimer', input: ({ context }) => ({ deadline: context.nextAttemptAt! }) },
      on: {
        EVENTS_BUFFERED: { actions: 'noteBuffered' },
        DEADLINE_REACHED: { target: 'dispatching', actions: ['noteTime', 'clearRetry'] },
        ...NOTE_ENABLED_CHANGES,
        ...FOLLOW_SETTINGS,
      },
    },
    /** No deliveries until `quarantinedUntil` or RELEASE; events keep buffering. */
    quarantined: {
      invoke: { src: 'deadlineTimer', input: ({ context }) => ({ deadline: context.quarantinedUntil! }) },
      on: {
        EVENTS_BUFFERED: { actions: 'noteBuffered' },
        DEADLINE_REACHED: { target: 'dispatching', actions: ['noteTime', 'reportRelease', 'leaveQuarantine'] },
        RELEASE: { target: 'dispatching', actions: ['noteTime', 'reportRelease', 'leaveQuarantine'] },
        ...NOTE_ENABLED_CHANGES,
        ...FOLLOW_SETTINGS,
      },
    },
  },
})
