import { describe, expect, it } from 'vitest'
import { growthProblem, MiB, retainedTrend, theilSenSlope, type RetainedSample } from '../../scripts/memory/trend'

const MINUTE = 60_000

/** One reading every 10 s for `minutes`, on a floor of `floor` growing by `perMinute`. */
function readings(minutes: number, floor: number, perMinute: number): RetainedSample[] {
  return Array.from({ length: minutes * 6 }, (_, i) => ({
    at: i * 10_000,
    retainedHeap: floor + (perMinute * i) / 6,
    rss: 100 * MiB,
  }))
}

describe('retained heap trend', () => {
  it('finds the slope of a line', () => {
    expect(theilSenSlope([0, 1000, 2000, 3000], [10, 20, 30, 40])).toBeCloseTo(0.01)
    expect(theilSenSlope([5], [1])).toBeNull()
    expect(theilSenSlope([5, 5], [1, 2])).toBeNull()
  })

  it('passes a flat floor with spikes of requests in flight (the soak witness of session 10)', () => {
    const samples = readings(30, 24 * MiB, 0)
    // Four late readings 20-28 MiB above the floor, as the witness showed at 7, 11, 17 and 21 min.
    for (const [minute, extra] of [
      [7, 20],
      [11, 28],
      [17, 20],
      [21, 18],
    ])
      samples[minute * 6].retainedHeap += extra * MiB
    const trend = retainedTrend(samples, 5 * MINUTE)
    expect(Math.abs(trend.slopePer10Min!)).toBeLessThan(0.05 * MiB)
    expect(growthProblem(trend)).toBeNull()
  })

  it('fails a floor that grows 2 MiB per 10 minutes, spikes or not', () => {
    const samples = readings(30, 24 * MiB, 0.2 * MiB)
    samples[100].retainedHeap -= 15 * MiB
    const trend = retainedTrend(samples, 5 * MINUTE)
    expect(trend.slopePer10Min! / MiB).toBeCloseTo(2, 1)
    expect(growthProblem(trend)).toMatch(/grows 2\.00 MiB per 10 min/)
  })
})
