import { describe, expect, it } from 'vitest'
import { MemoryRateCounter } from '../../storage/local/counters'
import { slidingWindow } from '../../server/http/sliding-window'

/**
 * The rate limits (API, registry, and calls without a valid token) count in a sliding window: a
 * client never gets twice the limit in a moment by calling at the end of one fixed window and the
 * start of the next, is never told to wait more than a window, and is let in when it is told.
 */
const MINUTE = 60_000
const policy = { limit: 60, windowMs: MINUTE }
const T0 = Date.UTC(2026, 10, 27, 12, 0)

/** One client's calls at `times`, through the counter and the verdict the edge applies. */
async function calls(times: number[], counter = new MemoryRateCounter(), limit = policy) {
  const verdicts = []
  for (const at of times)
    verdicts.push({
      at,
      ...slidingWindow(await counter.hit('auth:198.51.100.7', limit.limit, limit.windowMs, at), limit, at),
    })
  return verdicts
}

const range = (length: number, from: number, step: number) => Array.from({ length }, (_, i) => from + i * step)

describe('sliding-window rate limit', () => {
  it('allows the limit within one window and refuses the next call, counting down what remains', async () => {
    const verdicts = await calls(range(61, T0 + 1_000, 10))
    expect(verdicts.slice(0, 60).every((verdict) => verdict.allowed)).toBe(true)
    expect(verdicts.slice(0, 60).map((verdict) => verdict.remaining)).toEqual(
      Array.from({ length: 60 }, (_, i) => 59 - i),
    )
    expect(verdicts[60]).toMatchObject({ allowed: false, remaining: 0 })
  })

  it('never allows twice the limit across a window boundary (fixed windows allowed 120 in 0.2 s)', async () => {
    // 120 calls from 0.1 s before a minute boundary to 0.1 s after it, then 1,000 more over 10 s.
    const verdicts = await calls([...range(120, T0 + MINUTE - 100, 1.7), ...range(1_000, T0 + MINUTE + 200, 10)])
    expect(verdicts.findIndex((verdict) => !verdict.allowed)).toBe(60)
    expect(verdicts.filter((verdict) => verdict.allowed)).toHaveLength(60)
  })

  it('counts a burst of the window before whole until a window after it, then nothing', async () => {
    const counter = new MemoryRateCounter()
    // 60 calls within the last 0.6 s of a window.
    const burst = await calls(range(60, T0 + MINUTE - 600, 10), counter)
    expect(burst.every((verdict) => verdict.allowed)).toBe(true)
    // 59.5 s later (the burst's first call not yet a minute old): still refused, and told when.
    const early = await calls([T0 + 2 * MINUTE - 1_100], counter)
    expect(early[0].allowed).toBe(false)
    expect(early[0].resetAt - early[0].at).toBeLessThanOrEqual(MINUTE)
    // A minute after the burst's last call, the whole limit is there again.
    const later = await calls(range(61, T0 + 2 * MINUTE - 10, 1), counter)
    expect(later.filter((verdict) => verdict.allowed)).toHaveLength(60)
  })

  it('lets calls spread over the window before age out in proportion to the time passed', async () => {
    const counter = new MemoryRateCounter()
    // 60 calls spread over the first window (one a second): all allowed.
    const first = await calls(range(60, T0, 1_000), counter)
    expect(first.every((verdict) => verdict.allowed)).toBe(true)
    // Half-way through the next window, about half of them count: 29 or 30 more are allowed.
    const next = await calls(range(40, T0 + MINUTE + 30_000, 1), counter)
    const allowed = next.filter((verdict) => verdict.allowed).length
    expect(allowed).toBeGreaterThanOrEqual(29)
    expect(allowed).toBeLessThanOrEqual(30)
  })

  it('refused: says the first moment a call is allowed again, within a window, and a call then is', async () => {
    const small = { limit: 5, windowMs: 10_000 }
    for (const burstAt of [T0 + 5, T0 + 4_000, T0 + 9_990, T0 + 9_000]) {
      for (const spacing of [1, 300]) {
        const times = range(8, burstAt, spacing)
        const verdicts = await calls(times, new MemoryRateCounter(), small)
        const refused = verdicts[7]
        expect(refused.allowed).toBe(false)
        expect(refused.resetAt).toBeGreaterThan(refused.at)
        expect(refused.resetAt - refused.at).toBeLessThanOrEqual(small.windowMs)
        // Just before the moment given a call is still refused; at that moment it is allowed
        // (each on a counter that saw the same calls).
        const before = new MemoryRateCounter()
        await calls(times, before, small)
        expect((await calls([refused.resetAt - 1], before, small))[0].allowed).toBe(false)
        const at = new MemoryRateCounter()
        await calls(times, at, small)
        expect((await calls([refused.resetAt], at, small))[0].allowed).toBe(true)
      }
    }
  })

  it('does not count refused calls: a client calling on past the limit waits no longer for it', async () => {
    const counter = new MemoryRateCounter()
    const burst = await calls(range(60, T0, 1), counter)
    expect(burst.every((verdict) => verdict.allowed)).toBe(true)
    // One call every 10 ms for ten seconds: all refused, each told the same moment.
    const flood = await calls(range(1_000, T0 + 1_000, 10), counter)
    expect(flood.some((verdict) => verdict.allowed)).toBe(false)
    const moments = new Set(flood.map((verdict) => verdict.resetAt))
    expect(moments.size).toBe(1)
    // A minute after the burst's first calls, as they leave the sliding window.
    const [moment] = moments
    expect(moment).toBeGreaterThanOrEqual(T0 + MINUTE)
    expect(moment).toBeLessThanOrEqual(T0 + 59 + MINUTE)
    expect((await calls([moment], counter))[0].allowed).toBe(true)
  })
})
