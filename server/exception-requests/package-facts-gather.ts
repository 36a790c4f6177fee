import type { ExceptionRequestPorts } from './ports'
import type { CallContext } from '../auth/call-context'
import type { AdvisoryPort } from '../advisories/lookup'
import { forbidden } from '../common/errors'
import { firewallLogPage } from '../firewall/log-page'
import { packageVersions, type PackageVersionPorts } from '../registry/package-versions'
import { readsAllRequests, visibleFirewall, visibleRequest } from './access'
import { assemblePackageFacts, type PackageFacts } from './package-facts'
import { otherPendingRequests } from './queries'

/** What the facts panel reads: the requests and the log, the upstreams (through their cache) and the advisory data. */
export interface PackageFactsPorts extends ExceptionRequestPorts, PackageVersionPorts {
  advisories: Pick<AdvisoryPort, 'current'>
}

/** How far back the panel counts blocks of the package. */
export const BLOCK_WINDOW_DAYS = 30
/** Blocks read at most for the count (the log is scanned newest first). */
const MAX_BLOCKS = 500

/**
 * The facts panel of one exception request, for a caller who reads every request of the
 * firewall (a reviewer): the upstream's versions of the package (bounded by a timeout; an
 * unreachable upstream is a fact of its own, never an error), its advisories, its blocks in the
 * last 30 days and by whom (from the firewall log, which the service reads for the reviewer),
 * and the other pending requests for it.
 * @example const facts = await gatherPackageFacts(ctx, 'web', 'exr-...')
 */
export async function gatherPackageFacts(
  ctx: CallContext<PackageFactsPorts>,
  firewallId: string,
  requestId: string,
): Promise<PackageFacts> {
  const firewall = await visibleFirewall(ctx, firewallId)
  const stored = await visibleRequest(ctx, firewall, requestId)
  if (!readsAllRequests(ctx, firewall)) throw forbidden('fw:read')
  const { selector } = stored.record.proposedException
  const now = ctx.services.clock.now()
  const since = new Date(now - BLOCK_WINDOW_DAYS * 24 * 3600_000).toISOString()
  const advisories = ctx.services.advisories.current()
  const [upstream, log, pending] = await Promise.all([
    packageVersions(ctx.services, ctx.ns, firewall, selector.packageName, selector.version),
    firewallLogPage(
      ctx.services.firewallLog,
      ctx.ns,
      firewall.id,
      { packageName: selector.packageName, blocked: true, since },
      MAX_BLOCKS,
    ),
    otherPendingRequests(ctx, firewall.id, selector.packageName, requestId),
  ])
  return assemblePackageFacts({
    packageName: selector.packageName,
    version: selector.version,
    now,
    upstream,
    advisoriesOf: (version) => advisories.lookup(firewall.ecosystem, selector.packageName, version),
    blocks: log.entries.flatMap((entry) =>
      entry.outcome === 'upstream_error'
        ? []
        : [{ user: entry.user, version: entry.version, rule: entry.rule, time: entry.time }],
    ),
    windowDays: BLOCK_WINDOW_DAYS,
    otherPending: pending.map((request) => ({
      id: request.id,
      requestedBy: request.requestedBy,
      version: request.proposedException.selector.version,
      rule: request.proposedException.rule,
      requestedAt: request.requestedAt,
    })),
  })
}
