import type { CounterStore, WindowHits } from '../ports'
import { keys } from '../repositories/keys'
import { evalScript } from '../redis-eval'
import type { RedisConnection } from './connection'

/**
 * INCR of the current window's count and, on its first hit, PEXPIRE (it is read as the previous
 * window through the next one, then disappears by itself, so nothing needs sweeping); and the
 * previous window's count, in one atomic step. KEYS[1] current window, KEYS[2] previous window
 * (one hash tag: the subject), ARGV[1] ttl ms. Returns { current, previous }.
 */
const WINDOW_HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, tonumber(redis.call('GET', KEYS[2]) or '0') }
`

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

  async hit(subject: string, windowMs: number, now: number): Promise<WindowHits> {
    const window = Math.floor(now / windowMs)
    const windowStart = window * windowMs
    const current = this.connection.raw(keys.rateWindow(subject, windowMs, window))
    const previous = this.connection.raw(keys.rateWindow(subject, windowMs, window - 1))
    // Counted through this window and read through the next; a second of slack so clock skew
    // between processes and Redis never drops a live window.
    const ttl = String(windowStart + 2 * windowMs - now + 1000)
    const [count, before] = (await evalScript(this.connection.client, WINDOW_HIT, 2, current, previous, ttl)) as [
      number,
      number,
    ]
    return { current: Number(count), previous: Number(before), windowStart }
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
