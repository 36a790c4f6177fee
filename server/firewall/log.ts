import type { FirewallCall } from './ports'
import { requireFirewallPermission } from '../auth/permissions'
import { firewallNotFound } from '../common/errors'
import type { FirewallLogFilter } from './log-query'
import { firewallLogPage, type FirewallLogPage } from './log-page'

interface FirewallLogQuery extends FirewallLogFilter {
  limit?: number
  cursor?: string | null
}

/**
 * `GET /v1/{ns}/config/{fw}/log` (needs `fw:read`): decisions newest first, filtered by
 * `since`/`until`/`packageName`/`blocked`/`requestId`, paged with an opaque cursor.
 * @example const { entries, nextCursor } = await queryFirewallLog(ctx, 'main', { blocked: true, limit: 50 })
 */
export async function queryFirewallLog(
  ctx: FirewallCall,
  fwId: string,
  query: FirewallLogQuery,
): Promise<FirewallLogPage> {
  const firewall = await ctx.services.firewalls.get(ctx.ns, fwId)
  if (!firewall) throw firewallNotFound(fwId)
  requireFirewallPermission(ctx.principal, firewall, 'fw:read')
  const { limit = 100, cursor, ...filter } = query
  return firewallLogPage(ctx.services.firewallLog, ctx.ns, fwId, filter, Math.max(1, Math.min(limit, 1000)), cursor)
}
