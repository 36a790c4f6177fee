import type { EdgePorts } from './ports'
import type { Principal, RequestMeta } from '../auth/principal'
import { logger } from '../app/logger'
import { recordAudit } from './audit'
import type { RateLimitScope } from './rate-limit-settings'

/** At most one audit entry per subject (client address or token) and window. */
const REFUSAL_AUDIT_WINDOW_MS = 60_000

interface Refusal {
  ns: string
  scope: RateLimitScope
  /** The caller, when its token was valid (rate limits of a token); null for failed authentication. */
  principal: Principal | null
  meta: RequestMeta
  statusCode: number
}

const subjectOf = (refusal: Refusal) =>
  refusal.principal
    ? `token:${refusal.principal.tokenIdentifier}`
    : `address:${refusal.meta.remoteAddress ?? 'unknown'}`

/**
 * Subjects with a flush timer (each holds its refusal until the window ends). Bounded (#30): past
 * this many (a flood from more addresses than this within one window) no timer is set; the count
 * stays in the tally and goes into the subject's next report, if it calls again.
 */
export const PENDING_REFUSAL_FLUSHES = 10_000
const pendingFlushes = new Set<string>()

/** Flush timers set now (at most PENDING_REFUSAL_FLUSHES). */
export function pendingRefusalFlushes(): number {
  return pendingFlushes.size
}

async function report(services: EdgePorts, refusal: Refusal, count: number): Promise<void> {
  await recordAudit(services, {
    ns: refusal.ns,
    action: 'request.refused',
    outcome: 'failure',
    statusCode: refusal.statusCode,
    principal: refusal.principal,
    meta: refusal.meta,
    errorMessage: `${count} call(s) refused past the ${refusal.scope} rate limit`,
    // `suppressed`: the refusals this one entry stands for (none of them is audited on its own).
    eventData: { suppressed: count, limit: refusal.scope },
  })
}

/**
 * Audits refusals past a limit in aggregate: the first refusal of a window writes
 * one `audit.request.refused` entry at once; later ones are counted and written as one entry when the
 * window has passed, so a flood can never push real events out of a receiver's buffer.
 */
export async function auditRefusal(services: EdgePorts, refusal: Refusal): Promise<void> {
  // Calls that never reached a namespace (unknown or another one) have no audit log to go to.
  if (!refusal.principal && !(await services.namespaces.get(refusal.ns))) return
  const subject = `${refusal.ns}:${subjectOf(refusal)}`
  const tally = services.refusalTally
  const count = await tally.note(subject, REFUSAL_AUDIT_WINDOW_MS)
  if (count > 0) await report(services, refusal, count)
  scheduleFlush(services, refusal, subject)
}

/** After the window, what was counted but not reported yet becomes one entry (and opens the next window). */
function scheduleFlush(services: EdgePorts, refusal: Refusal, subject: string): void {
  if (pendingFlushes.has(subject) || pendingFlushes.size >= PENDING_REFUSAL_FLUSHES) return
  pendingFlushes.add(subject)
  const timer = setTimeout(() => {
    pendingFlushes.delete(subject)
    services.refusalTally
      .flush(subject, REFUSAL_AUDIT_WINDOW_MS)
      .then(async (count) => {
        if (count === 0) return
        await report(services, refusal, count)
        scheduleFlush(services, refusal, subject)
      })
      .catch((error) => logger.warn('refusal audit flush failed', { error: String(error) }))
  }, REFUSAL_AUDIT_WINDOW_MS + 50)
  timer.unref()
}
