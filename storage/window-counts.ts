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
 * Lua, in the same whole numbers, so both agree to the millisecond).
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

/** Calls still allowed now (rounded down): `limit` less what the sliding window holds. */
export function callsLeft(
  previous: WindowCount,
  current: WindowCount,
  limit: number,
  windowMs: number,
  now: number,
): number {
  const { numerator, denominator } = previousCounted(previous, windowMs, now)
  return Math.max(0, Math.floor((limit * denominator - numerator - current.count * denominator) / denominator))
}

/**
 * The first moment one more call fits, if no other call comes first: later in the current window
 * (`windowStart`), once enough of the previous window's calls have aged out, or in the next one,
 * once enough of the current window's have. Never more than one window after the current
 * window's last call (or after `now`, when it has none).
 */
export function nextCallAt(
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
