import type { AttemptOutcome } from '../../../machines/webhook-delivery/types'
import type { AttemptRecord } from '../../../storage/model/delivery'

export { withAttempt, type AttemptRecord } from '../../../storage/model/delivery'

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
