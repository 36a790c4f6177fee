import { afterEach, describe, expect, it, vi } from 'vitest'
import { TimeSlice } from '../../server/common/time-slice'

/** Counts the turns a slice gives to the loop, on the real clock or a fake one. */
class ObservedSlice extends TimeSlice {
  pauses = 0
  override async pause(): Promise<void> {
    this.pauses++
    await super.pause()
  }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('TimeSlice.fresh: a turn before a step that cannot take turns, unless the slice has hardly begun', () => {
  it('keeps its turn while the slice is under 1 ms old, and pauses once it is older', async () => {
    vi.useFakeTimers({ toFake: ['performance'] })
    const slice = new ObservedSlice()
    await slice.fresh()
    vi.advanceTimersByTime(0.5)
    await slice.fresh()
    expect(slice.pauses).toBe(0)
    vi.advanceTimersByTime(0.6)
    await slice.fresh()
    expect(slice.pauses).toBe(1)
    // The pause started a new slice: the next step starts at once again.
    await slice.fresh()
    expect(slice.pauses).toBe(1)
  })

  it('pauses when the slice is spent, as step() does', async () => {
    vi.useFakeTimers({ toFake: ['performance'] })
    const slice = new ObservedSlice()
    vi.advanceTimersByTime(6)
    await slice.fresh()
    vi.advanceTimersByTime(6)
    await slice.step()
    expect(slice.pauses).toBe(2)
  })
})
