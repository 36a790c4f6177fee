import { describe, expect, it } from 'vitest'
import { fromPromise } from 'xstate'
import type { AttemptReport, DeliverBatchInput, TakeBatchOutput } from '../../machines/webhook-delivery/types'
import { DeliveryHarness, FakeClock, TEST_SETTINGS } from './delivery-harness'

const T0 = 1_700_000_000_000

function setup(settings = TEST_SETTINGS) {
  const clock = new FakeClock(T0)
  const harness = new DeliveryHarness(clock, settings)
  harness.start()
  return { clock, harness }
}

describe('webhook delivery machine: retries', () => {
  it('stays active while nothing is buffered', async () => {
    const { clock, harness } = setup()
    await clock.advanceBy(60_000)
    expect(harness.state()).toBe('active')
    expect(harness.calls).toHaveLength(0)
  })

  it('retries 500x3 on the schedule and succeeds on the 4th attempt under one delivery id', async () => {
    const { clock, harness } = setup()
    harness.responses = [{ status: 500 }, { status: 500 }, { status: 500 }, { status: 200 }]
    harness.append(3)
    await clock.advanceTo(T0)
    expect(harness.state()).toBe('retrying')
    expect(harness.actor.getSnapshot().context.nextAttemptAt).toBe(T0 + 30_000)
    await clock.advanceTo(T0 + 2 * 3_600_000)

    expect(harness.calls.map((call) => call.at - T0)).toEqual([0, 30_000, 150_000, 750_000])
    expect(new Set(harness.calls.map((call) => call.deliveryId))).toEqual(new Set(['whdel-1']))
    expect(harness.calls.map((call) => call.attempt)).toEqual([1, 2, 3, 4])
    expect(harness.calls.every((call) => call.eventIds.join() === 'evt-1,evt-2,evt-3')).toBe(true)
    expect(harness.state()).toBe('active')
    const attempted = harness.emitted.filter((e) => e.type === 'delivery.attempted')
    expect(attempted.map((e) => e.type === 'delivery.attempted' && e.status)).toEqual([
      'retrying',
      'retrying',
      'retrying',
      'success',
    ])
    expect(harness.emitted).toContainEqual(
      expect.objectContaining({ type: 'delivery.succeeded', deliveryId: 'whdel-1', attempts: 4 }),
    )
    expect(harness.buffer).toEqual([])
  })

  it('keeps new events out of a batch fixed at its first attempt', async () => {
    const { clock, harness } = setup()
    harness.responses = [{ status: 500 }]
    harness.append(2)
    await clock.advanceTo(T0)
    harness.append(2)
    await clock.advanceTo(T0 + 30_000)
    expect(harness.calls[1].eventIds).toEqual(['evt-1', 'evt-2'])
    expect(harness.calls[2]).toMatchObject({ deliveryId: 'whdel-2', eventIds: ['evt-3', 'evt-4'], attempt: 1 })
  })

  it('waits the Retry-After of a 429 instead of the schedule', async () => {
    const { clock, harness } = setup()
    harness.responses = [{ status: 429, retryAfterMs: 7_000 }]
    harness.append(1)
    await clock.advanceTo(T0 + 6_999)
    expect(harness.calls).toHaveLength(1)
    await clock.advanceTo(T0 + 7_000)
    expect(harness.calls.map((call) => call.at - T0)).toEqual([0, 7_000])
  })

  it('ignores a Retry-After on statuses other than 429 and 503', async () => {
    const { clock, harness } = setup()
    harness.responses = [{ status: 500, retryAfterMs: 7_000 }]
    harness.append(1)
    await clock.advanceTo(T0 + 30_000)
    expect(harness.calls.map((call) => call.at - T0)).toEqual([0, 30_000])
  })

  it('counts a throwing deliverBatch as a failed attempt with status 0', async () => {
    const clock = new FakeClock(T0)
    const harness = new DeliveryHarness(clock)
    const base = harness.machine.bind(harness)
    // Replace the attempt with one whose adapter crashes.
    const crashing = fromPromise<AttemptReport, DeliverBatchInput>(async () => {
      throw new Error('adapter down')
    })
    harness.machine = () => base().provide({ actors: { deliverBatch: crashing } })
    harness.start()
    harness.append(1)
    await clock.advanceTo(T0)
    expect(harness.state()).toBe('retrying')
    expect(harness.actor.getSnapshot().context.lastOutcome).toMatchObject({ responseStatus: 0, error: 'adapter down' })
  })
})

describe('webhook delivery machine: exhaustion and quarantine', () => {
  async function exhaust() {
    const { clock, harness } = setup()
    harness.responses = Array.from({ length: 6 }, () => ({ status: 500 }))
    harness.append(2)
    await clock.advanceTo(T0 + 7_000_000)
    return { clock, harness }
  }
  const LAST_ATTEMPT = 30_000 + 120_000 + 600_000 + 1_800_000 + 3_600_000

  it('fails the batch after six attempts, drops its events and quarantines for 24 h', async () => {
    const { harness } = await exhaust()
    expect(harness.calls).toHaveLength(6)
    expect(harness.calls[5]).toMatchObject({ attempt: 6, lastAttempt: true, at: T0 + LAST_ATTEMPT })
    expect(harness.state()).toBe('quarantined')
    expect(harness.actor.getSnapshot().context.quarantinedUntil).toBe(T0 + LAST_ATTEMPT + 24 * 3_600_000)
    expect(harness.emitted).toContainEqual(
      expect.objectContaining({ type: 'delivery.failed', droppedEvents: ['evt-1', 'evt-2'], attempts: 6 }),
    )
    expect(harness.emitted).toContainEqual(expect.objectContaining({ type: 'webhook.quarantined' }))
    expect(harness.buffer).toEqual([])
  })

  it('keeps buffering while quarantined and resumes when the quarantine ends', async () => {
    const { clock, harness } = await exhaust()
    harness.append(3)
    await clock.advanceTo(T0 + LAST_ATTEMPT + 24 * 3_600_000 - 1)
    expect(harness.calls).toHaveLength(6)
    expect(harness.actor.getSnapshot().context.bufferedEvents).toBe(3)
    await clock.advanceTo(T0 + LAST_ATTEMPT + 24 * 3_600_000)
    expect(harness.calls[6]).toMatchObject({ deliveryId: 'whdel-2', eventIds: ['evt-3', 'evt-4', 'evt-5'], attempt: 1 })
    expect(harness.state()).toBe('active')
    expect(harness.emitted).toContainEqual(expect.objectContaining({ type: 'webhook.released', reason: 'expired' }))
  })

  it('resumes at once on RELEASE', async () => {
    const { clock, harness } = await exhaust()
    harness.append(1)
    harness.actor.send({ type: 'RELEASE', now: clock.now() })
    await clock.advanceBy(0)
    expect(harness.calls).toHaveLength(7)
    expect(harness.state()).toBe('active')
    expect(harness.actor.getSnapshot().context.quarantinedUntil).toBeNull()
    expect(harness.emitted).toContainEqual(expect.objectContaining({ type: 'webhook.released', reason: 'manual' }))
  })

  it('goes back to active on RELEASE with nothing buffered', async () => {
    const { clock, harness } = await exhaust()
    harness.actor.send({ type: 'RELEASE', now: clock.now() })
    expect(harness.state()).toBe('active')
    expect(clock.pending()).toBe(0)
  })
})

describe('webhook delivery machine: pacing', () => {
  it('never starts more than `rate` attempts in any one-second window', async () => {
    const { clock, harness } = setup({ ...TEST_SETTINGS, backlogNoticeThreshold: 10 })
    harness.batchSize = 1
    harness.append(23)
    await clock.advanceTo(T0 + 10_000)
    const starts = harness.calls.map((call) => call.at)
    expect(starts).toHaveLength(23)
    for (const start of starts) {
      expect(starts.filter((other) => other >= start && other < start + 1000).length).toBeLessThanOrEqual(5)
    }
    // Bursts of five, then a wait for the window: 23 attempts take four full seconds.
    expect(starts[22] - T0).toBe(4_000)
    expect(harness.emitted.filter((e) => e.type === 'webhook.rate_limited')).toHaveLength(1)
  })

  it.each([
    [2, [0, 0, 1_000, 1_000, 2_000, 2_000]],
    [0.5, [0, 2_000, 4_000, 6_000, 8_000, 10_000]],
    [2.5, [0, 0, 800, 800, 1_600, 1_600]],
    // Never above the operator's rate, whatever a document says.
    [50, [0, 0, 0, 0, 0, 1_000]],
  ])('paces to the webhook rateLimit %s its document gives it', async (rateLimit, expected) => {
    const { clock, harness } = setup()
    harness.batchSize = 1
    harness.changeSettings({ rateLimit })
    harness.append(6)
    await clock.advanceTo(T0 + 20_000)
    expect(harness.calls.map((call) => call.at - T0)).toEqual(expected)
    expect(harness.actor.getSnapshot().context.rateLimit).toBe(rateLimit)
  })

  it('goes back to the operator rate when the rateLimit is removed', async () => {
    const { clock, harness } = setup()
    harness.batchSize = 1
    harness.changeSettings({ rateLimit: 1 })
    harness.append(2)
    await clock.advanceTo(T0 + 5_000)
    harness.changeSettings({ rateLimit: null })
    harness.append(6)
    await clock.advanceTo(T0 + 20_000)
    expect(harness.calls.map((call) => call.at - T0)).toEqual([0, 1_000, 5_000, 5_000, 5_000, 5_000, 5_000, 6_000])
  })

  it('reports pacing as state `pacing` with the deadline in context', async () => {
    const { clock, harness } = setup()
    harness.batchSize = 1
    harness.append(6)
    await clock.advanceTo(T0)
    expect(harness.state()).toBe('pacing')
    expect(harness.actor.getSnapshot().context.pacedUntil).toBe(T0 + 1_000)
  })
})

describe('webhook delivery machine: a disabled webhook', () => {
  it('stops draining when disabled and resumes with the same events when enabled', async () => {
    const { clock, harness } = setup()
    harness.batchSize = 2
    let answer!: () => void
    harness.gate = new Promise((resolve) => (answer = resolve))
    harness.append(1)
    await clock.advanceTo(T0)
    expect(harness.state()).toBe('delivering')
    // Disabled while an attempt is in flight: that attempt ends, nothing further is taken.
    harness.disabled = true
    harness.actor.send({ type: 'DISABLED', now: clock.now() })
    harness.append(3)
    answer()
    await clock.advanceTo(T0 + 60_000)
    expect(harness.state()).toBe('disabled')
    expect(harness.calls.map((call) => call.eventIds)).toEqual([['evt-1']])
    expect(harness.actor.getSnapshot().context.bufferedEvents).toBe(3)

    harness.disabled = false
    harness.actor.send({ type: 'ENABLED', now: clock.now() })
    await clock.advanceTo(T0 + 61_000)
    expect(harness.state()).toBe('active')
    expect(harness.calls.map((call) => call.eventIds)).toEqual([['evt-1'], ['evt-2', 'evt-3'], ['evt-4']])
  })

  it('moves from active to disabled at once, and keeps a batch waiting for its retry until enabled', async () => {
    const { clock, harness } = setup()
    harness.actor.send({ type: 'DISABLED', now: clock.now() })
    expect(harness.state()).toBe('disabled')
    harness.actor.send({ type: 'ENABLED', now: clock.now() })
    expect(harness.state()).toBe('active')

    harness.responses = [{ status: 500 }]
    harness.append(1)
    await clock.advanceTo(T0)
    expect(harness.state()).toBe('retrying')
    harness.actor.send({ type: 'DISABLED', now: clock.now() })
    await clock.advanceTo(T0 + 3_600_000)
    expect(harness.state()).toBe('disabled')
    expect(harness.calls).toHaveLength(1)
    harness.actor.send({ type: 'ENABLED', now: clock.now() })
    await clock.advanceBy(0)
    expect(harness.calls.map((call) => [call.deliveryId, call.attempt])).toEqual([
      ['whdel-1', 1],
      ['whdel-1', 2],
    ])
    expect(harness.state()).toBe('active')
  })
})

describe('webhook delivery machine: storage edges', () => {
  it('returns to active when the buffer turns out empty', async () => {
    const { clock, harness } = setup()
    harness.actor.send({ type: 'EVENTS_BUFFERED', bufferedEvents: 4, now: clock.now() })
    await clock.advanceBy(0)
    expect(harness.state()).toBe('active')
    expect(harness.actor.getSnapshot().context.bufferedEvents).toBe(0)
    expect(harness.calls).toHaveLength(0)
  })

  it('starts one delivery at a time while more events arrive', async () => {
    const { clock, harness } = setup()
    harness.gate = new Promise(() => {})
    harness.append(1)
    await clock.advanceBy(0)
    harness.append(1)
    harness.append(1)
    await clock.advanceBy(0)
    expect(harness.state()).toBe('delivering')
    expect(harness.calls).toHaveLength(1)
    expect(harness.actor.getSnapshot().context.bufferedEvents).toBe(3)
  })

  it('waits the first retry delay when storage cannot hand out a batch, then tries again', async () => {
    const clock = new FakeClock(T0)
    const harness = new DeliveryHarness(clock)
    const base = harness.machine.bind(harness)
    let failures = 1
    harness.machine = () => {
      const machine = base()
      const take = fromPromise<TakeBatchOutput, { webhookId: string }>(async () => {
        if (failures-- > 0) throw new Error('storage down')
        return {
          batch: { deliveryId: 'whdel-x', eventIds: harness.buffer.slice() },
          bufferedEvents: harness.buffer.length,
          now: clock.now(),
        }
      })
      return machine.provide({ actors: { takeBatch: take } })
    }
    harness.start()
    harness.append(1)
    await clock.advanceBy(0)
    expect(harness.state()).toBe('retrying')
    await clock.advanceTo(T0 + 30_000)
    expect(harness.calls).toMatchObject([{ deliveryId: 'whdel-x', attempt: 1, at: T0 + 30_000 }])
  })
})
