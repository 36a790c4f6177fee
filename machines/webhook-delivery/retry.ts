import type { AttemptOutcome } from './types'

/** Longest wait a `Retry-After` header may impose. */
const RETRY_AFTER_CAP_MS = 60 * 60 * 1000

/** Statuses whose `Retry-After` is honoured. */
const RETRY_AFTER_STATUSES = new Set([429, 503])

/**
 * Reads a `Retry-After` value (delay seconds or an HTTP date) as milliseconds from `now`,
 * capped at one hour; null when absent or unreadable. Dates in the past give 0.
 * @example parseRetryAfter('7', Date.now()) // 7000
 */
export function parseRetryAfter(header: string | string[] | undefined | null, now: number): number | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim()
  if (!value) return null
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, RETRY_AFTER_CAP_MS)
  // Only the HTTP-date form is accepted besides seconds; Date.parse alone would take "1" or ISO text.
  if (!/^[A-Za-z]{3},? /.test(value)) return null
  const at = Date.parse(value)
  if (Number.isNaN(at)) return null
  return Math.min(Math.max(0, at - now), RETRY_AFTER_CAP_MS)
}

/** The `Retry-After` delay that applies to a response, or undefined (only 429 and 503 count). */
export function applicableRetryAfter(status: number, retryAfterMs: number | null | undefined): number | undefined {
  if (!RETRY_AFTER_STATUSES.has(status) || retryAfterMs == null) return undefined
  return Math.min(retryAfterMs, RETRY_AFTER_CAP_MS)
}

/** Attempts per batch: one immediate plus one per schedule entry. */
export function maxAttempts(schedule: readonly number[]): number {
  return schedule.length + 1
}

/**
 * Delay before the next attempt after `attemptsSoFar` failed attempts, or null when none are
 * left. A `Retry-After` (already filtered to 429/503) replaces the scheduled delay, capped.
 * @example nextDelay(1, [30000, 120000]) // 30000
 */
export function nextDelay(
  attemptsSoFar: number,
  schedule: readonly number[],
  retryAfterMs?: number | null,
): number | null {
  if (attemptsSoFar < 1 || attemptsSoFar >= maxAttempts(schedule)) return null
  if (retryAfterMs != null) return Math.min(Math.max(0, retryAfterMs), RETRY_AFTER_CAP_MS)
  return schedule[attemptsSoFar - 1]
}

/**
 * The one place the retry delay is computed: after failed attempt number `attempt` of a batch,
 * the wait before the next one, or null when none is left. A `Retry-After` on 429 or 503 replaces
 * the scheduled delay, capped at one hour. The machine schedules its retry with it (policy.ts
 * `retryDelayAfter`) and the adapter records the same deadline with the attempt.
 * @example retryDelay(1, { responseStatus: 503, retryAfterMs: 7000 }, [30000]) // 7000
 */
export function retryDelay(
  attempt: number,
  outcome: Pick<AttemptOutcome, 'responseStatus' | 'retryAfterMs'>,
  schedule: readonly number[],
): number | null {
  return nextDelay(attempt, schedule, applicableRetryAfter(outcome.responseStatus, outcome.retryAfterMs))
}
