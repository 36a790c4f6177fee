import type { WindowHits } from '../../storage/ports'
import type { RateLimit } from './rate-limit-settings'

/** What a hit comes to under a limit. */
export interface SlidingWindowVerdict {
  allowed: boolean
  /** Calls left before the next one is refused (if none of the counted ones aged meanwhile). */
  remaining: number
  /**
   * Allowed: when the current fixed window ends, from which its calls start to age out.
   * Refused: the first moment a call would be allowed again, if no other call comes first.
   */
  resetAt: number
}

/**
 * A sliding window estimated from two fixed ones (the approach of Cloudflare's and nginx's
 * limiters): the calls of the window before count in proportion to how much of it the sliding
 * window still covers. Fixed windows alone let a client make twice the limit in a moment, the
 * limit at the end of one window and again at the start of the next: a brute-force guard then
 * allows 120 guesses a minute where it says 60. Refused calls count too, so a client that keeps
 * calling stays refused.
 * @example slidingWindow({ current: 30, previous: 60, windowStart: 0 }, { limit: 60, windowMs: 60_000 }, 30_000).allowed // true (30 + 60 * 0.5 = 60)
 */
export function slidingWindow(hits: WindowHits, policy: RateLimit, now: number): SlidingWindowVerdict {
  const { limit, windowMs } = policy
  const { current, previous, windowStart } = hits
  const windowEnd = windowStart + windowMs
  const counted = previous * ((windowEnd - now) / windowMs) + current
  if (counted <= limit)
    return { allowed: true, remaining: Math.max(0, Math.floor(limit - counted)), resetAt: windowEnd }
  return { allowed: false, remaining: 0, resetAt: Math.max(now, nextAllowedAt(hits, policy)) }
}

/**
 * When one more call would be counted within the limit: later in this window, once enough of the
 * previous one has aged out, or in the next one, once enough of this one has.
 */
function nextAllowedAt({ current, previous, windowStart }: WindowHits, { limit, windowMs }: RateLimit): number {
  // previous * (windowStart + windowMs - t) / windowMs + current + 1 <= limit, for t in this window
  const room = limit - current - 1
  if (room >= 0 && previous > 0) {
    const at = windowStart + Math.ceil(windowMs * (1 - room / previous))
    if (at < windowStart + windowMs) return at
  }
  // current * (windowStart + 2 * windowMs - t) / windowMs + 1 <= limit, for t in the next window
  return windowStart + windowMs + Math.max(0, Math.ceil(windowMs * (1 - (limit - 1) / current)))
}
