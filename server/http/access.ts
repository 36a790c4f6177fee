import type { CallContext } from '../auth/call-context'
import type { AccessPorts } from './ports'
import { firewallPermissions, requireNamespacePermission } from '../auth/permissions'
import type { Principal } from '../auth/principal'
import { forbidden, firewallNotFound, notFound } from '../common/errors'
import { noteCheckedFirewall } from '../firewall/call-read'
import type { Firewall } from '../firewall/schema'
import type { FirewallPermission } from '../firewall/schema'
import type { NamespacePermission } from '../namespace/schema'

/**
 * What an operation's path demands of the caller, checked by the router after authentication and
 * BEFORE the query and body are read: a caller without the permission gets 403 (or 404 for a firewall
 * it cannot see) whatever it sent. The domain functions check again inside their
 * transactions; this check is the one every operation declares, so none can forget it.
 */
export type Access = (ctx: CallContext<AccessPorts>, params: Record<string, string>) => void | Promise<void>

/** Any authenticated principal of the namespace (e.g. `me`, personal tokens). */
export const member: Access = () => undefined

/** A namespace permission (teams carry them; `ns:admin` and the owner hold all). */
export const namespace =
  (permission: NamespacePermission): Access =>
  (ctx) =>
    requireNamespacePermission(ctx.principal, permission)

/**
 * A permission on the firewall `{fw}` names: 404 "firewall not found" when it is missing or the caller
 * holds nothing on it (exactly as for one that does not exist), 403 naming the permission otherwise.
 * `'visible'` only asks that the caller can see it (the operation decides the rest, e.g. withdraw).
 */
export const firewall = (permission: FirewallPermission | 'visible', param = 'fw'): Access => {
  const anyOf: FirewallPermission[] = permission === 'visible' ? [] : [permission]
  return (ctx, params) => {
    const id = params[param]
    const check = (found: Firewall | null) => {
      requireAny(ctx.principal, id, found, anyOf)
      noteCheckedFirewall(ctx, id, found)
    }
    // Checked in the same turn when the firewall is kept (#27: the router then awaits nothing).
    const kept = ctx.services.firewalls.getKept(ctx.ns, id)
    if (kept !== undefined) return check(kept)
    return ctx.services.firewalls.get(ctx.ns, id).then(check)
  }
}

/**
 * `firewall(permission)` for an operation that changes the firewall through `editFirewall`, whose
 * transaction judges the stored document again (and fails its compare-and-set on anything newer):
 * also checked, without a read, on the document this process itself stored within the last second
 * (#27: each rule upsert read back what its own previous write had stored). A caller whose access
 * changed through another process in that second is refused by the transaction, with the same
 * problem (an invalid body is then answered 400 first).
 */
export const firewallEdit = (permission: FirewallPermission): Access => {
  const fallback = firewall(permission)
  return (ctx, params) => {
    const known = ctx.services.firewalls.keptForEdit(ctx.ns, params.fw)
    if (known === undefined) return fallback(ctx, params)
    requireAny(ctx.principal, params.fw, known, [permission])
    noteCheckedFirewall(ctx, params.fw, known)
  }
}

/** 404 when the firewall is missing or invisible to the caller; 403 naming the first of `anyOf` when none is held. */
function requireAny(principal: Principal, id: string, found: Firewall | null, anyOf: FirewallPermission[]): void {
  const held = found ? firewallPermissions(principal, found) : new Set<FirewallPermission>()
  if (held.size === 0) throw firewallNotFound(id)
  if (anyOf.length > 0 && !anyOf.some((permission) => held.has(permission))) throw forbidden(anyOf[0])
}

/** Any of the edit permissions on an existing firewall (the replacement decides which it needs), or create. */
export const firewallWrite: Access = async (ctx, params) => {
  const found = await ctx.services.firewalls.get(ctx.ns, params.fw)
  if (!found) return requireNamespacePermission(ctx.principal, 'ns:firewalls:create')
  requireAny(ctx.principal, params.fw, found, [
    'fw:update:config',
    'fw:update:rule',
    'fw:update:exception',
    'fw:update:credentials',
  ])
}

/**
 * A permission on the firewall of the exposure `{id}` names: 404 "exposure not found" when it is
 * missing or on a firewall the caller holds nothing on, 403 naming the permission otherwise.
 */
export const exposureFirewall =
  (permission: FirewallPermission, param = 'id'): Access =>
  async (ctx, params) => {
    const id = params[param]
    const exposure = await ctx.services.exposures.get(ctx.ns, id)
    const found = exposure ? await ctx.services.firewalls.get(ctx.ns, exposure.firewall) : null
    if (!found || firewallPermissions(ctx.principal, found).size === 0) throw notFound('exposure', id)
    requireAny(ctx.principal, found.id, found, [permission])
  }
