import type { CounterStore, WindowCount, WindowHits } from '../ports'
import { keys } from '../repositories/keys'
import { evalScript } from '../redis-eval'
import type { RedisConnection } from './connection'

/**
 * A sliding-window hit (ports.ts `RateCounter`; the rules of window-counts.ts, said again here in
 * the same whole numbers) in one atomic step: each window is a hash of its count and its first and
 * last call (`n`, `f`, `l`); the call is counted in the current one only when it fits, and the
 * current one gets its expiry on its first call (it is read as the previous window through the
 * next one, then disappears by itself, so nothing needs sweeping). KEYS[1] current window,
 * KEYS[2] previous window (one hash tag: the subject); ARGV[1] now, ARGV[2] window ms, ARGV[3]
 * limit, ARGV[4] ttl ms. Returns { counted (1 or 0), current n, f, l, previous n, f, l }.
 */
const WINDOW_HIT = `
local cur = redis.call('HMGET', KEYS[1], 'n', 'f', 'l')
local prev = redis.call('HMGET', KEYS[2], 'n', 'f', 'l')
local cn, cf, cl = tonumber(cur[1] or '0'), tonumber(cur[2] or '0'), tonumber(cur[3] or '0')
local pn, pf, pl = tonumber(prev[1] or '0'), tonumber(prev[2] or '0'), tonumber(prev[3] or '0')
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local slid = now - window
local num, den = 0, 1
if pn > 0 and pl > slid then
  if pf > slid then num = pn else num, den = pn * (pl - slid), pl - pf end
end
if num + (cn + 1) * den > limit * den then return { 0, cn, cf, cl, pn, pf, pl } end
if cn == 0 or now < cf then cf = now end
if cn == 0 or now > cl then cl = now end
redis.call('HSET', KEYS[1], 'n', cn + 1, 'f', cf, 'l', cl)
if cn == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return { 1, cn + 1, cf, cl, pn, pf, pl }
`

const windowCount = (count: number, first: number, last: number): WindowCount => ({
  count: Number(count),
  first: Number(first),
  last: Number(last),
})

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

/**
 * Counters on Redis, shared by every process (why not rate-limiter-flexible, with figures:
 * local/counters.ts): INCRBY for plain ones; a window hit and a refusal tally each one Lua call
 * (one round trip) whose keys expire by themselves.
 */
export class RedisCounters implements CounterStore {
  constructor(private readonly connection: RedisConnection) {}

  increment(key: string, by = 1): Promise<number> {
    return this.connection.client.incrby(this.connection.raw(key), by)
  }

  async hit(subject: string, limit: number, windowMs: number, now: number): Promise<WindowHits> {
    const window = Math.floor(now / windowMs)
    const windowStart = window * windowMs
    const current = this.connection.raw(keys.rateWindow(subject, windowMs, window))
    const previous = this.connection.raw(keys.rateWindow(subject, windowMs, window - 1))
    // Counted through this window and read through the next; a second of slack so clock skew
    // between processes and Redis never drops a live window.
    const ttl = String(windowStart + 2 * windowMs - now + 1000)
    const reply = (await evalScript(
      this.connection.client,
      WINDOW_HIT,
      2,
      current,
      previous,
      String(now),
      String(windowMs),
      String(limit),
      ttl,
    )) as number[]
    return {
      counted: Number(reply[0]) === 1,
      current: windowCount(reply[1], reply[2], reply[3]),
      previous: windowCount(reply[4], reply[5], reply[6]),
      windowStart,
    }
  }

  note(subject: string, windowMs: number): Promise<number> {
    return this.tally(subject, windowMs, true)
  }

  flush(subject: string, windowMs: number): Promise<number> {
    return this.tally(subject, windowMs, false)
  }

  private async tally(subject: string, windowMs: number, count: boolean): Promise<number> {
    const base = this.connection.raw(keys.refusalTally(subject))
    const args = [`${base}:pending`, `${base}:gate`, String(windowMs), count ? '1' : '0']
    return Number(await evalScript(this.connection.client, REFUSAL_NOTE, 2, ...args))
  }
}
