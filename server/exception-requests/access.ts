import type { ExceptionRequestCall } from './ports'
import { DECIDE_PERMISSION, type CallerFacts } from '../../machines/exception-request.machine'
import type { StoredExceptionRequest } from '../../storage/repositories/exception-requests'
import { canSeeFirewall, firewallPermissions } from '../auth/permissions'
import { notFound, firewallNotFound } from '../common/errors'
import { nowIso } from '../auth/call-context'
import type { Exception, Firewall } from '../firewall/schema'

/** The exception-request repository of the call's services. */
export const requestsOf = (ctx: ExceptionRequestCall) => ctx.services.exceptionRequests

/** The facts the machine's guards decide on, for this caller on this firewall. */
export function callerFacts(
  ctx: ExceptionRequestCall,
  firewall: Pick<Firewall, 'permissions'>,
  at: string = nowIso(ctx),
): CallerFacts {
  return { actor: ctx.principal.id, permissions: [...firewallPermissions(ctx.principal, firewall)], at }
}

/** The firewall, or 404 when it is missing or the caller holds no permission on it. */
export async function visibleFirewall(ctx: ExceptionRequestCall, id: string): Promise<Firewall> {
  const firewall = await ctx.services.firewalls.get(ctx.ns, id)
  if (!firewall || !canSeeFirewall(ctx.principal, firewall)) throw firewallNotFound(id)
  return firewall
}

/** `fw:read` reads every request of a firewall, and so does a reviewer; others read their own. */
export function readsAllRequests(ctx: ExceptionRequestCall, firewall: Pick<Firewall, 'permissions'>): boolean {
  const held = firewallPermissions(ctx.principal, firewall)
  return held.has('fw:read') || held.has(DECIDE_PERMISSION)
}

/** The stored request, or 404 when it is missing or the caller may not read it. */
export async function visibleRequest(
  ctx: ExceptionRequestCall,
  firewall: Firewall,
  id: string,
): Promise<StoredExceptionRequest<Exception>> {
  const stored = await requestsOf(ctx).get(ctx.ns, firewall.id, id)
  if (!stored || (!readsAllRequests(ctx, firewall) && stored.record.requestedBy !== ctx.principal.id)) {
    throw notFound('exception request', id)
  }
  return stored
}
