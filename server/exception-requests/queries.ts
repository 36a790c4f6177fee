import type { ExceptionRequestCall } from './ports'
import { requireFirewallPermission } from '../auth/permissions'
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
