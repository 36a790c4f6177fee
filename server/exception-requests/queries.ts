import type { ExceptionRequestCall } from './ports'
import { canSeeFirewall, requireFirewallPermission } from '../auth/permissions'
import { callerFacts, readsAllRequests, requestsOf, visibleFirewall, visibleRequest } from './access'
import { present } from './actor'
import type { ExceptionRequestView, ListQuery } from './model'

/**
 * `GET .../exception-requests`: all of the firewall's requests for `fw:read` (or a reviewer),
 * the caller's own for `fw:access`; oldest first, one page and the next cursor.
 */
export async function listExceptionRequests(
  ctx: ExceptionRequestCall,
  firewallId: string,
  query: ListQuery,
): Promise<{ items: ExceptionRequestView[]; next: string | null }> {
  const firewall = await visibleFirewall(ctx, firewallId)
  const all = readsAllRequests(ctx, firewall)
  if (!all) requireFirewallPermission(ctx.principal, firewall, 'fw:access')
  const page = await requestsOf(ctx).list(ctx.ns, firewallId, {
    statuses: query.status,
    requestedBy: all ? undefined : ctx.principal.id,
    limit: query.limit,
    after: query.cursor,
  })
  const facts = callerFacts(ctx, firewall)
  return { items: page.items.map((stored) => present(stored, facts)), next: page.next }
}

/** `GET .../exception-requests/{id}`: 404 for a request the caller may not read. */
export async function getExceptionRequest(
  ctx: ExceptionRequestCall,
  firewallId: string,
  id: string,
): Promise<ExceptionRequestView> {
  const firewall = await visibleFirewall(ctx, firewallId)
  const stored = await visibleRequest(ctx, firewall, id)
  return present(stored, callerFacts(ctx, firewall))
}

/**
 * The caller's own requests on the given firewalls (every status), newest first: what a
 * developer's home lists. Firewalls the caller cannot see contribute nothing.
 * @example const mine = await listOwnExceptionRequests(ctx, ['web', 'py'], 50)
 */
export async function listOwnExceptionRequests(
  ctx: ExceptionRequestCall,
  firewallIds: readonly string[],
  limit: number,
): Promise<ExceptionRequestView[]> {
  const lists = await Promise.all(
    firewallIds.map(async (id) => {
      const firewall = await ctx.services.firewalls.get(ctx.ns, id)
      if (!firewall || !canSeeFirewall(ctx.principal, firewall)) return []
      const page = await requestsOf(ctx).list(ctx.ns, id, { requestedBy: ctx.principal.id, limit: 1000 })
      const facts = callerFacts(ctx, firewall)
      return page.items.map((stored) => present(stored, facts))
    }),
  )
  return lists
    .flat()
    .sort((a, b) => b.requestedAt.localeCompare(a.requestedAt))
    .slice(0, limit)
}

/**
 * Pending requests of a firewall for `packageName` other than `exceptId`: the facts panel's
 * "other requests for it". Callers that read every request (reviewers) only.
 */
export async function otherPendingRequests(
  ctx: ExceptionRequestCall,
  firewallId: string,
  packageName: string,
  exceptId: string,
): Promise<ExceptionRequestView[]> {
  const firewall = await visibleFirewall(ctx, firewallId)
  if (!readsAllRequests(ctx, firewall)) return []
  const page = await requestsOf(ctx).list(ctx.ns, firewallId, { statuses: ['pending'], limit: 1000 })
  const facts = callerFacts(ctx, firewall)
  return page.items
    .filter(
      (stored) => stored.record.id !== exceptId && stored.record.proposedException.selector.packageName === packageName,
    )
    .map((stored) => present(stored, facts))
}
