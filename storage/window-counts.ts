import type { WindowCount } from './ports'

/**
 * A sliding window of `windowMs` estimated from two fixed windows (the approach of Cloudflare's and
 * nginx's limiters, with the previous window's calls spread over the span they actually came in,
 * first to last, rather than over the whole window): all of the current window's calls count, and
 * of the previous window's, the share of that span the sliding window `(now - windowMs, now]`
 * still covers. A burst counts whole until a window after its first call and nothing a window
 * after its last; a lone call counts for exactly one window.
 *
 * These are the rules the counters apply (local/counters.ts; redis/counters.ts says them again in
 * Lua, in the same whole numbers, so both agree to the millisecond); the verdict a caller is
 * given, with its Retry-After, is server/http/sliding-window.ts.
 */

export const NO_CALLS: WindowCount = { count: 0, first: 0, last: 0 }

/** `window` with one more call at `now` (processes' clocks may disagree a little: first <= last stays true). */
export const withCall = (window: WindowCount, now: number): WindowCount =>
  window.count === 0
    ? { count: 1, first: now, last: now }
    : { count: window.count + 1, first: Math.min(window.first, now), last: Math.max(window.last, now) }

/**
 * The previous window's calls still in the sliding window at `now`, as a fraction
 * `numerator / denominator` (whole numbers, denominator > 0).
 */
export function previousCounted(
  previous: WindowCount,
  windowMs: number,
  now: number,
): { numerator: number; denominator: number } {
  const slidStart = now - windowMs
  if (previous.count === 0 || previous.last <= slidStart) return { numerator: 0, denominator: 1 }
  if (previous.first > slidStart) return { numerator: previous.count, denominator: 1 }
  // first <= slidStart < last: the part of the span after the sliding window's start.
  const span = previous.last - previous.first
  return { numerator: previous.count * (previous.last - slidStart), denominator: span }
}

/**
 * Whether one more call fits `limit` calls in the sliding window at `now`.
 * @example fitsSlidingWindow({ count: 60, first: 0, last: 500 }, NO_CALLS, 60, 60_000, 60_100) // false: the burst still counts whole
 */
export function fitsSlidingWindow(
  previous: WindowCount,
  current: WindowCount,
  limit: number,
  windowMs: number,
  now: number,
): boolean {
  const { numerator, denominator } = previousCounted(previous, windowMs, now)
  return numerator + (current.count + 1) * denominator <= limit * denominator
}
