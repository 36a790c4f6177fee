import type { AttemptOutcome } from '../../../machines/webhook-delivery/types'

/**
 * One attempt of a delivery as `GET .../deliveries/{deliveryId}/attempts` answers it (#14).
 * The delivery record keeps only the last attempt's fields; this keeps every one.
 */
export interface AttemptRecord {
  /** 1-based. */
  attempt: number
  startedAt: string
  durationMillis: number
  /** 0 when no response arrived (network error, timeout, refused address). */
  responseStatus: number
  /** At most 4 KB (the sender keeps no more). */
  responseBody: string
  error?: string
  /** When the retry of this failed attempt was scheduled for; absent after a success or the last attempt. */
  nextAttemptAt?: string
}

/** What one finished attempt tells its attempt record. */
interface AttemptRecordFacts {
  attempt: number
  outcome: AttemptOutcome
  startedAt: number
  nextAttemptAt: number | null
}

/**
 * The stored form of one attempt.
 * @example attemptRecord({ attempt: 1, outcome, startedAt: Date.now(), nextAttemptAt: null }).attempt // 1
 */
export function attemptRecord(facts: AttemptRecordFacts): AttemptRecord {
  return {
    attempt: facts.attempt,
    startedAt: new Date(facts.startedAt).toISOString(),
    durationMillis: facts.outcome.durationMillis,
    responseStatus: facts.outcome.responseStatus,
    responseBody: facts.outcome.responseBody,
    ...(facts.outcome.error ? { error: facts.outcome.error } : {}),
    ...(facts.nextAttemptAt === null ? {} : { nextAttemptAt: new Date(facts.nextAttemptAt).toISOString() }),
  }
}

/**
 * The attempt list with `next` in it, oldest first. An attempt re-run after a crash has the same
 * number as the interrupted one and replaces it, so the list never holds an attempt twice.
 * @example withAttempt([first], second).map((a) => a.attempt) // [1, 2]
 */
export function withAttempt(attempts: readonly AttemptRecord[], next: AttemptRecord): AttemptRecord[] {
  return [...attempts.filter((existing) => existing.attempt !== next.attempt), next].sort(
    (a, b) => a.attempt - b.attempt,
  )
}
