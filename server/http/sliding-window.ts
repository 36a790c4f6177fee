import type { WindowCount, WindowHits } from '../../storage/ports'
import { previousCounted } from '../../storage/window-counts'
import type { RateLimit } from './rate-limit-settings'

/** What a hit comes to under a limit. */
export interface SlidingWindowVerdict {
  allowed: boolean
  /** Calls left before the next one is refused (if none of the counted ones aged meanwhile). */
  remaining: number
  /**
   * Allowed: when the current fixed window ends. Refused: the first moment a call is allowed
   * again if no other call comes first, never more than one window from now.
   */
  resetAt: number
}

/**
 * The verdict on a hit under a sliding window: what is left, and when to come back
 * (storage/window-counts.ts has the estimate; the counter decided whether the call fit and
 * counted it). Fixed windows alone let a client make twice the limit in a moment, the limit at
 * the end of one window and again at the start of the next: a brute-force guard allowed 120
 * guesses in 0.2 s where it says 60 a minute.
 * @example slidingWindow(await counter.hit(subject, 60, 60_000, now), { limit: 60, windowMs: 60_000 }, now).allowed
 */
export function slidingWindow(hits: WindowHits, policy: RateLimit, now: number): SlidingWindowVerdict {
  const { limit, windowMs } = policy
  const { previous, current, windowStart } = hits
  if (hits.counted)
    return {
      allowed: true,
      remaining: callsLeft(previous, current, limit, windowMs, now),
      resetAt: windowStart + windowMs,
    }
  return {
    allowed: false,
    remaining: 0,
    resetAt: nextCallAt(previous, current, limit, windowMs, windowStart, now),
  }
}

/** Calls still allowed now (rounded down): `limit` less what the sliding window holds. */
function callsLeft(previous: WindowCount, current: WindowCount, limit: number, windowMs: number, now: number): number {
  const { numerator, denominator } = previousCounted(previous, windowMs, now)
  return Math.max(0, Math.floor((limit * denominator - numerator - current.count * denominator) / denominator))
}

/**
 * The first moment one more call fits, if no other call comes first: later in the current window
 * (`windowStart`), once enough of the previous window's calls have aged out, or in the next one,
 * once enough of the current window's have. Never more than one window after the current
 * window's last call (or after `now`, when it has none).
 */
function nextCallAt(
  previous: WindowCount,
  current: WindowCount,
  limit: number,
  windowMs: number,
  windowStart: number,
  now: number,
): number {
  const windowEnd = windowStart + windowMs
  // In this window: the previous window's share has to fall to `room`.
  const room = limit - current.count - 1
  if (room >= 0) {
    const at = agedTo(previous, room, windowMs)
    if (at < windowEnd) return Math.max(now, at)
  }
  // In the next one: this window's calls are the previous ones then, and none are current.
  return Math.max(now, windowEnd, agedTo(current, limit - 1, windowMs))
}

/** When at most `room` of `window`'s calls are still in the sliding window (room >= 0). */
function agedTo(window: WindowCount, room: number, windowMs: number): number {
  if (window.count <= room) return 0
  const span = window.last - window.first
  // count * (last + windowMs - t) <= room * span, with t > first + windowMs; a span of 0: t = last + windowMs.
  return window.last + windowMs - Math.floor((room * span) / window.count)
}
