import type { FirewallCall } from './ports'
import { canOnFirewall } from '../auth/permissions'
import type { DecisionLogEntry } from './log-query'
import { firewallLogPage } from './log-page'

/** A block of one of the caller's own requests, as their home lists it. */
export interface OwnBlock {
  firewall: string
  requestId: string
  packageName: string
  version: string
  rule: string
  message: string
  time: string
}

/**
 * The caller's own recent blocks on the firewalls they may install through, newest first.
 * The log is read by the service whatever the caller's `fw:read`, but only entries whose
 * `user` is the caller are kept: a developer sees what blocked them, never anyone else.
 * @example await ownRecentBlocks(ctx, ['web'], { since: '2026-11-12T00:00:00Z', limit: 20 })
 */
export async function ownRecentBlocks(
  ctx: FirewallCall,
  firewallIds: readonly string[],
  options: { since: string; limit: number },
): Promise<OwnBlock[]> {
  const lists = await Promise.all(
    firewallIds.map(async (id) => {
      const firewall = await ctx.services.firewalls.get(ctx.ns, id)
      if (!firewall || !canOnFirewall(ctx.principal, firewall, 'fw:access')) return []
      const { entries } = await firewallLogPage(
        ctx.services.firewallLog,
        ctx.ns,
        id,
        { blocked: true, user: ctx.principal.id, since: options.since },
        options.limit,
      )
      return entries
        .filter(
          (entry): entry is DecisionLogEntry & { rule: string } => entry.outcome !== 'upstream_error' && !!entry.rule,
        )
        .map((entry) => ({
          firewall: id,
          requestId: entry.request,
          packageName: entry.packageName,
          version: entry.version,
          rule: entry.rule,
          message: entry.message,
          time: entry.time,
        }))
    }),
  )
  return lists
    .flat()
    .sort((a, b) => b.time.localeCompare(a.time))
    .slice(0, options.limit)
}
