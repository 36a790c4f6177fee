import type { WindowHits } from '../../storage/ports'
import { callsLeft, nextCallAt } from '../../storage/window-counts'
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
 * The verdict on a hit under a sliding window (storage/window-counts.ts has the estimate; the
 * counter decided whether the call fit and counted it). Fixed windows alone let a client make
 * twice the limit in a moment, the limit at the end of one window and again at the start of the
 * next: a brute-force guard allowed 120 guesses in 0.2 s where it says 60 a minute.
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
