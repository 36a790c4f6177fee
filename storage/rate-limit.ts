import type { Backend } from './backend'
import { RedisBackend } from './redis-backend'
import { keys } from './repositories/keys'
import { evalScript } from './redis-eval'

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
    const key = `${this.backend.prefix}:${keys.rateWindow(subject, windowMs, window)}`
    // A second of slack so clock skew between processes and Redis never drops a live window.
    const count = Number(await evalScript(this.backend.redis, FIXED_WINDOW_HIT, 1, key, String(resetAt - now + 1000)))
    return { count, resetAt }
  }
}

/**
 * Subjects (tokens, client addresses) the in-memory counters and tallies track at most (#30). Past
 * it, ended windows are swept; if every window is still open (a flood from more addresses than
 * this within one window), the oldest is dropped: that subject's count starts again, which costs
 * at most one more window's worth of its calls, while memory stays bounded.
 */
export const MEMORY_RATE_SUBJECTS = 100_000

/** Drops the first (oldest inserted) entries of `map` until it holds fewer than `max`. */
function dropOldest(map: Map<string, unknown>, max: number): void {
  for (const key of map.keys()) {
    if (map.size < max) return
    map.delete(key)
  }
}

/** Single-process storage: the counters live in memory (one process owns the data dir). */
export class MemoryRateCounter implements RateCounter {
  private readonly windows = new Map<string, WindowHit>()

  constructor(private readonly maxSubjects = MEMORY_RATE_SUBJECTS) {}

  /** Windows tracked now (at most `maxSubjects`). */
  get size(): number {
    return this.windows.size
  }

  async hit(subject: string, windowMs: number, now: number): Promise<WindowHit> {
    const key = `${subject}:${windowMs}`
    const resetAt = (Math.floor(now / windowMs) + 1) * windowMs
    let current = this.windows.get(key)
    if (!current || current.resetAt !== resetAt) {
      this.windows.delete(key)
      if (this.windows.size >= this.maxSubjects) {
        this.sweep(now)
        dropOldest(this.windows, this.maxSubjects)
      }
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

/**
 * Tallies refusals per subject so that a flood becomes one audit entry a window, not one a call.
 * `note` counts a refusal; when no report was made for the subject within `windowMs`, it returns
 * the number of refusals the report stands for (this one and any left over) and starts a new
 * window; otherwise 0. `flush` reports what is left once a window has passed.
 */
export interface RefusalTally {
  note(subject: string, windowMs: number): Promise<number>
  flush(subject: string, windowMs: number): Promise<number>
}

/** KEYS[1] pending count, KEYS[2] window gate; ARGV[1] window ms, ARGV[2] 1 = count this call. */
const REFUSAL_NOTE = `
local pending = tonumber(redis.call('GET', KEYS[1]) or '0')
if ARGV[2] == '1' then
  pending = redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], 86400000)
end
if pending > 0 and redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return pending
end
return 0
`

class RedisRefusalTally implements RefusalTally {
  constructor(private readonly backend: RedisBackend) {}

  private run(subject: string, windowMs: number, count: boolean): Promise<number> {
    const base = `${this.backend.prefix}:${keys.refusalTally(subject)}`
    return evalScript(
      this.backend.redis,
      REFUSAL_NOTE,
      2,
      `${base}:pending`,
      `${base}:gate`,
      String(windowMs),
      count ? '1' : '0',
    ).then(Number)
  }

  note(subject: string, windowMs: number): Promise<number> {
    return this.run(subject, windowMs, true)
  }

  flush(subject: string, windowMs: number): Promise<number> {
    return this.run(subject, windowMs, false)
  }
}

export class MemoryRefusalTally implements RefusalTally {
  private readonly subjects = new Map<string, { pending: number; gateUntil: number }>()

  constructor(private readonly maxSubjects = MEMORY_RATE_SUBJECTS) {}

  /** Subjects tracked now (at most `maxSubjects`). */
  get size(): number {
    return this.subjects.size
  }

  async note(subject: string, windowMs: number): Promise<number> {
    return this.take(subject, windowMs, 1)
  }

  async flush(subject: string, windowMs: number): Promise<number> {
    return this.take(subject, windowMs, 0)
  }

  private take(subject: string, windowMs: number, add: number): number {
    const now = Date.now()
    let entry = this.subjects.get(subject)
    if (!entry) {
      if (add === 0) return 0
      if (this.subjects.size >= this.maxSubjects) {
        for (const [key, value] of this.subjects)
          if (value.pending === 0 && value.gateUntil <= now) this.subjects.delete(key)
        dropOldest(this.subjects, this.maxSubjects)
      }
      entry = { pending: 0, gateUntil: 0 }
      this.subjects.set(subject, entry)
    }
    entry.pending += add
    if (entry.pending === 0 || entry.gateUntil > now) return 0
    const count = entry.pending
    entry.pending = 0
    entry.gateUntil = now + windowMs
    return count
  }
}

const tallies = new WeakMap<Backend, RefusalTally>()

/** The refusal tally of a backend: shared through Redis, in memory for the single-process backend. */
export function refusalTallyFor(backend: Backend): RefusalTally {
  let tally = tallies.get(backend)
  if (!tally) {
    tally = backend instanceof RedisBackend ? new RedisRefusalTally(backend) : new MemoryRefusalTally()
    tallies.set(backend, tally)
  }
  return tally
}
