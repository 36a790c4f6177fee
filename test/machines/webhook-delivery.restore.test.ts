import { waitFor } from '../support/wait-for'
import { describe, expect, it } from 'vitest'
import { deliveryStateView } from '../../machines/webhook-delivery/policy'
import { systemTimerClock } from '../../server/webhooks/delivery/deadline-timer'
import { DeliveryHarness, FakeClock, TEST_SETTINGS } from './delivery-harness'

const T0 = 1_700_000_000_000

/** Persists like the storage layer will: JSON out, JSON back. */
function persist(harness: DeliveryHarness) {
  const snapshot = JSON.parse(JSON.stringify(harness.actor.getPersistedSnapshot()))
  harness.actor.stop()
  return snapshot
}

describe('webhook delivery machine: persisted snapshots', () => {
  it('resumes a retry wait at the original deadline after restore', async () => {
    const clock = new FakeClock(T0)
    const harness = new DeliveryHarness(clock)
    harness.start()
    harness.responses = [{ status: 500 }, { status: 200 }]
    harness.append(2)
    await clock.advanceTo(T0 + 10_000)
    const snapshot = persist(harness)
    expect(clock.pending()).toBe(0)

    harness.start(snapshot)
    expect(harness.state()).toBe('retrying')
    await clock.advanceTo(T0 + 29_999)
    expect(harness.calls).toHaveLength(1)
    await clock.advanceTo(T0 + 30_000)
    expect(harness.calls[1]).toMatchObject({ deliveryId: 'whdel-1', attempt: 2, at: T0 + 30_000 })
    expect(harness.state()).toBe('active')
  })

  it('fires at once when the deadline passed while the process was down', async () => {
    const clock = new FakeClock(T0)
    const harness = new DeliveryHarness(clock)
    harness.start()
    harness.responses = [{ status: 503 }]
    harness.append(1)
    await clock.advanceTo(T0 + 1_000)
    const snapshot = persist(harness)
    await clock.advanceTo(T0 + 90_000)

    harness.start(snapshot)
    await clock.advanceBy(0)
    expect(harness.calls.map((call) => call.at - T0)).toEqual([0, 90_000])
    expect(harness.calls[1].deliveryId).toBe(harness.calls[0].deliveryId)
  })

  it('keeps a quarantine across restore and ends it on time', async () => {
    const clock = new FakeClock(T0)
    const harness = new DeliveryHarness(clock, { ...TEST_SETTINGS, retryScheduleMs: [1_000] })
    harness.start()
    harness.responses = [{ status: 500 }, { status: 500 }]
    harness.append(1)
    await clock.advanceTo(T0 + 1_000)
    expect(harness.state()).toBe('quarantined')
    harness.append(1)
    const snapshot = persist(harness)

    harness.start(snapshot)
    expect(deliveryStateView(harness.actor.getSnapshot())).toEqual({
      state: 'quarantined',
      bufferedEvents: 1,
      quarantinedUntil: new Date(T0 + 1_000 + 24 * 3_600_000).toISOString(),
    })
    await clock.advanceTo(T0 + 1_000 + 24 * 3_600_000)
    expect(harness.calls).toHaveLength(3)
    expect(harness.state()).toBe('active')
  })

  it('re-runs an attempt interrupted in flight with the same delivery id', async () => {
    const clock = new FakeClock(T0)
    const harness = new DeliveryHarness(clock)
    harness.start()
    harness.responses = [{ status: 500 }]
    harness.append(1)
    await clock.advanceTo(T0 + 1_000)
    harness.gate = new Promise(() => {})
    await clock.advanceTo(T0 + 30_000)
    expect(harness.state()).toBe('delivering')
    const snapshot = persist(harness)

    harness.gate = null
    harness.start(snapshot)
    await clock.advanceBy(0)
    expect(harness.calls.map((call) => [call.deliveryId, call.attempt])).toEqual([
      ['whdel-1', 1],
      ['whdel-1', 2],
      ['whdel-1', 2],
    ])
    expect(harness.state()).toBe('active')
  })
})

describe('webhook delivery machine: real timers', () => {
  it('retries on a short schedule with the system clock', async () => {
    const harness = new DeliveryHarness(systemTimerClock, { ...TEST_SETTINGS, retryScheduleMs: [50, 50] })
    harness.start()
    harness.responses = [{ status: 500 }, { status: 502 }, { status: 204 }]
    const started = Date.now()
    harness.append(1)
    // Bounds far above the 2 x 50 ms and far below the 30 s first retry of TEST_SETTINGS: they tell
    // the short schedule from the default one on a machine of any speed.
    await waitFor(() => harness.calls.length === 3 && harness.state() === 'active', 10_000)
    const gaps = harness.calls.slice(1).map((call, i) => call.at - harness.calls[i].at)
    expect(gaps.every((gap) => gap >= 45)).toBe(true)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(new Set(harness.calls.map((call) => call.deliveryId)).size).toBe(1)
    harness.actor.stop()
  })
})
