import { describe, expect, it } from 'vitest'
import { MemoryRateCounter } from '../../storage/local/counters'
import { slidingWindow } from '../../server/http/sliding-window'

/**
 * The rate limits (API, registry, and calls without a valid token) count in a sliding window: a
 * client never gets twice the limit in a moment by calling at the end of one fixed window and the
 * start of the next.
 */
const MINUTE = 60_000
const policy = { limit: 60, windowMs: MINUTE }
const T0 = Date.UTC(2026, 10, 27, 12, 0)

/** One client's calls at `times`, through the counter and the verdict the edge applies. */
async function calls(times: number[], counter = new MemoryRateCounter()) {
  const verdicts = []
  for (const at of times)
    verdicts.push({ at, ...slidingWindow(await counter.hit('auth:198.51.100.7', MINUTE, at), policy, at) })
  return verdicts
}

describe('sliding-window rate limit', () => {
  it('allows the limit within one window and refuses the next call, counting down what remains', async () => {
    const verdicts = await calls(Array.from({ length: 61 }, (_, i) => T0 + 1_000 + i * 10))
    expect(verdicts.slice(0, 60).every((verdict) => verdict.allowed)).toBe(true)
    expect(verdicts.slice(0, 60).map((verdict) => verdict.remaining)).toEqual(
      Array.from({ length: 60 }, (_, i) => 59 - i),
    )
    expect(verdicts[60]).toMatchObject({ allowed: false, remaining: 0 })
  })

  it('never allows twice the limit across a window boundary (fixed windows allowed 120 in 0.2 s)', async () => {
    // 120 calls from 0.1 s before a minute boundary to 0.1 s after it.
    const verdicts = await calls(Array.from({ length: 120 }, (_, i) => T0 + MINUTE - 100 + Math.floor((i * 200) / 120)))
    expect(verdicts.filter((verdict) => verdict.allowed)).toHaveLength(60)
    // Every call after the 60th is refused, on both sides of the boundary.
    expect(verdicts.findIndex((verdict) => !verdict.allowed)).toBe(60)
    expect(verdicts.slice(60).every((verdict) => !verdict.allowed)).toBe(true)
  })

  it('lets the calls of the window before age out in proportion to the time passed', async () => {
    const counter = new MemoryRateCounter()
    // 60 calls spread over the first window: all allowed.
    const first = await calls(
      Array.from({ length: 60 }, (_, i) => T0 + i * 1_000),
      counter,
    )
    expect(first.every((verdict) => verdict.allowed)).toBe(true)
    // Half-way through the next window, half of them count: 30 more are allowed, not 31.
    const next = await calls(
      Array.from({ length: 31 }, (_, i) => T0 + MINUTE + 30_000 + i),
      counter,
    )
    expect(next.filter((verdict) => verdict.allowed)).toHaveLength(30)
    expect(next[30].allowed).toBe(false)
  })

  it('refused: says the first moment a call is allowed again, and a call then is', async () => {
    for (const burstAt of [T0 + 5_000, T0 + MINUTE - 500]) {
      const counter = new MemoryRateCounter()
      const verdicts = await calls(
        Array.from({ length: 65 }, (_, i) => burstAt + i),
        counter,
      )
      const refused = verdicts[64]
      expect(refused.allowed).toBe(false)
      expect(refused.resetAt).toBeGreaterThan(refused.at)
      // Just before the moment given, a call is still refused (checked on a copy of the counts).
      const copy = new MemoryRateCounter()
      await calls(
        verdicts.map((verdict) => verdict.at),
        copy,
      )
      expect((await calls([refused.resetAt - 1], copy))[0].allowed).toBe(false)
      // At that moment it is allowed.
      expect((await calls([refused.resetAt], counter))[0].allowed).toBe(true)
    }
  })
})
