import { describe, expect, it } from 'vitest'
import { createActor, fromCallback, fromPromise, type Snapshot } from 'xstate'
import { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine'
import { takeOnBuffered } from '../../machines/webhook-delivery/policy'
import type {
  AttemptReport,
  DeliverBatchInput,
  DeliveryContext,
  TakeBatchInput,
  TakeBatchOutput,
} from '../../machines/webhook-delivery/types'
import { TEST_SETTINGS } from './delivery-harness'

const T0 = 1_700_000_000_000

/**
 * The host takes ahead of an actor's step whenever `takeOnBuffered` says the actor would take at
 * once (server/webhooks/delivery/host.ts): it must say so exactly when the machine does, with the
 * input the machine gives its `takeBatch`.
 */
function machineTakes(value: string, context: Partial<DeliveryContext>, bufferedEvents: number, now: number) {
  const takes: TakeBatchInput[] = []
  const machine = webhookDeliveryMachine.provide({
    actors: {
      takeBatch: fromPromise<TakeBatchOutput, TakeBatchInput>(({ input }) => {
        takes.push(input)
        return new Promise(() => undefined)
      }),
      deliverBatch: fromPromise<AttemptReport, DeliverBatchInput>(() => new Promise(() => undefined)),
      deadlineTimer: fromCallback(() => undefined),
    },
  })
  const initial = createActor(machine, { input: { webhookId: 'ns/wh', now: T0, settings: TEST_SETTINGS } })
  const persisted = initial.getPersistedSnapshot() as unknown as { value: unknown; context: DeliveryContext }
  const full = { ...persisted.context, ...context }
  const actor = createActor(machine, {
    input: { webhookId: 'ns/wh', now: T0, settings: TEST_SETTINGS },
    snapshot: { ...persisted, value, context: full } as unknown as Snapshot<unknown>,
  })
  actor.start()
  actor.send({ type: 'EVENTS_BUFFERED', bufferedEvents, now })
  const state = actor.getSnapshot().value
  actor.stop()
  return { predicted: takeOnBuffered(value, full, bufferedEvents, now), taken: takes[0] ?? null, state }
}

describe('takeOnBuffered: the take an idle actor starts at once', () => {
  const cases: [string, string, Partial<DeliveryContext>, number, number][] = [
    ['active, events arrive', 'active', {}, 3, T0],
    ['active, nothing buffered', 'active', {}, 0, T0],
    ['disabled', 'disabled', { disabled: true }, 3, T0],
    ['active but marked disabled', 'active', { disabled: true }, 3, T0],
    [
      'rate reached in the window',
      'active',
      { recentStarts: [T0 - 900, T0 - 800, T0 - 700, T0 - 600, T0 - 500] },
      3,
      T0,
    ],
    [
      'rate reached, window passed by the event time',
      'active',
      { recentStarts: [T0 - 900, T0 - 800, T0 - 700, T0 - 600, T0 - 500] },
      3,
      T0 + 200,
    ],
    ['own rate limit of one per 2 s', 'active', { rateLimit: 0.5, recentStarts: [T0 - 1_500] }, 1, T0],
    ['own rate limit, its window passed', 'active', { rateLimit: 0.5, recentStarts: [T0 - 2_500] }, 1, T0],
    ['one attempt only', 'active', { settings: { ...TEST_SETTINGS, retryScheduleMs: [] } }, 2, T0],
  ]

  it.each(cases)('%s: predicted as the machine does it', (_name, value, context, bufferedEvents, now) => {
    const { predicted, taken } = machineTakes(value, context, bufferedEvents, now)
    expect(predicted).toEqual(taken)
  })

  it('covers both answers: some cases take, some do not', () => {
    const outcomes = cases.map(([, value, context, bufferedEvents, now]) =>
      machineTakes(value, context, bufferedEvents, now),
    )
    expect(outcomes.filter((outcome) => outcome.taken !== null)).toHaveLength(4)
    expect(outcomes.find((outcome) => outcome.state === 'pacing')).toBeDefined()
    expect(outcomes.at(-1)!.taken).toEqual({ webhookId: 'ns/wh', firstAttemptIsLast: true })
  })
})
