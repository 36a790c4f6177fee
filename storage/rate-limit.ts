import type { Backend } from './backend'
import { RedisBackend } from './redis-backend'

/** The count of one subject in its current fixed window. */
export interface WindowHit {
  count: number
  /** When the window ends (ms since epoch). */
  resetAt: number
}

/** Counts hits per subject in fixed windows; shared by every process on one Redis. */
export interface RateCounter {
  hit(subject: string, windowMs: number, now: number): Promise<WindowHit>
}

/**
 * INCR and, on the window's first hit, PEXPIRE, in one atomic step: the key disappears by
 * itself after its window, so nothing needs sweeping. KEYS[1] counter, ARGV[1] ttl ms.
 */
const FIXED_WINDOW_HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
`

class RedisRateCounter implements RateCounter {
  constructor(private readonly backend: RedisBackend) {}

  async hit(subject: string, windowMs: number, now: number): Promise<WindowHit> {
    const window = Math.floor(now / windowMs)
    const resetAt = (window + 1) * windowMs
    const key = `${this.backend.prefix}:ratelimit:${subject}:${windowMs}:${window}`
    // A second of slack so clock skew between processes and Redis never drops a live window.
    const count = Number(await this.backend.redis.eval(FIXED_WINDOW_HIT, 1, key, String(resetAt - now + 1000)))
    return { count, resetAt }
  }
}

/** Single-process storage: the counters live in memory (one process owns the data dir). */
class MemoryRateCounter implements RateCounter {
  private readonly windows = new Map<string, WindowHit>()

  async hit(subject: string, windowMs: number, now: number): Promise<WindowHit> {
    const key = `${subject}:${windowMs}`
    const resetAt = (Math.floor(now / windowMs) + 1) * windowMs
    let current = this.windows.get(key)
    if (!current || current.resetAt !== resetAt) {
      if (this.windows.size > 10_000) this.sweep(now)
      current = { count: 0, resetAt }
      this.windows.set(key, current)
    }
    current.count++
    return { ...current }
  }

  private sweep(now: number): void {
    for (const [key, hit] of this.windows) if (hit.resetAt <= now) this.windows.delete(key)
  }
}

const counters = new WeakMap<Backend, RateCounter>()

/**
 * The rate counter of a backend: Redis-shared for the Redis backend, in memory otherwise.
 * @example await rateCounterFor(backend).hit('api:tok-1', 60_000, Date.now())
 */
export function rateCounterFor(backend: Backend): RateCounter {
  let counter = counters.get(backend)
  if (!counter) {
    counter = backend instanceof RedisBackend ? new RedisRateCounter(backend) : new MemoryRateCounter()
    counters.set(backend, counter)
  }
  return counter
}
