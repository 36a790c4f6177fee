import type { RegistryPorts } from './ports'
import type { Principal, RequestMeta } from '../auth/principal'
import { newId } from '../common/ids'
import { compact } from '../events/factory'
import type { UpstreamErrorLogEntry } from '../firewall/log-query'
import type { Firewall } from '../firewall/schema'
import type { UpstreamUnavailable } from './upstream/client'

/** The request an upstream failure happened in. */
export interface FailureSite {
  ns: string
  firewall: Firewall
  principal: Principal
  meta: RequestMeta
}

/**
 * The firewall log entry of one failed upstream call. Pure but for the id and the clock.
 * @example upstreamErrorEntry(services.clock.now(), site, new UpstreamUnavailable('npmjs', 'status 500'))
 */
function upstreamErrorEntry(now: number, site: FailureSite, failure: UpstreamUnavailable): UpstreamErrorLogEntry {
  return compact({
    id: newId('log', now),
    time: new Date(now).toISOString(),
    outcome: 'upstream_error' as const,
    blocked: false as const,
    firewall: site.firewall.id,
    firewallVersion: site.firewall.version,
    ecosystem: site.firewall.ecosystem,
    upstream: failure.upstream,
    reason: failure.reason,
    message: failure.message,
    user: site.principal.id,
    request: site.meta.requestId,
    method: site.meta.method,
    path: site.meta.path,
    interaction: site.principal.interaction,
    userAgent: site.meta.userAgent,
    remoteAddress: site.meta.remoteAddress,
  }) as UpstreamErrorLogEntry
}

/**
 * Writes one firewall log entry per failed upstream call of a request (each failure once):
 * the one that failed the request and those skipped on the way to another upstream. Never
 * an event.
 */
export async function recordUpstreamFailures(
  services: Pick<RegistryPorts, 'clock' | 'firewallLog'>,
  site: FailureSite,
  failures: readonly UpstreamUnavailable[],
): Promise<void> {
  const seen = new Set<UpstreamUnavailable>()
  const unique = failures.filter((failure) => !seen.has(failure) && seen.add(failure))
  const now = services.clock.now()
  await services.firewallLog.appendWithoutEvents(
    site.ns,
    site.firewall.id,
    unique.map((failure) => upstreamErrorEntry(now, site, failure)),
  )
}
