import { FIREWALL_PERMISSIONS, type Firewall, type FirewallPermission } from '../firewall/schema'
import type { NamespacePermission } from '../namespace/schema'
import { firewallNotFound, forbidden } from '../common/errors'
import { own } from '../common/own'
import type { Principal } from './principal'

/**
 * The one place that decides "may principal P do X on resource R". Every route, the
 * registry proxy and the dashboard ask here.
 */

const ALL_FIREWALL_PERMISSIONS = new Set<FirewallPermission>(FIREWALL_PERMISSIONS)

/** The literal principal key that means every authenticated principal of the namespace. */
const EVERYBODY = 'everybody'

function isAdmin(principal: Principal): boolean {
  return principal.owner || principal.grants.includes('ns:admin')
}

/** Effective namespace permissions (for `me` and for checks). */
export function namespacePermissions(principal: Principal): string[] {
  if (isAdmin(principal)) return ['ns:admin']
  return [...new Set(principal.grants)].sort()
}

export function hasNamespacePermission(principal: Principal, permission: NamespacePermission): boolean {
  return isAdmin(principal) || principal.grants.includes(permission)
}

/**
 * A principal's permissions on one firewall: the union of the firewall's entries for the
 * principal id, each of its teams and `everybody`, plus `fw:*` grants held namespace-wide.
 */
export function firewallPermissions(
  principal: Principal,
  firewall: Pick<Firewall, 'permissions'>,
): Set<FirewallPermission> {
  if (isAdmin(principal)) return new Set(ALL_FIREWALL_PERMISSIONS)
  const result = new Set<FirewallPermission>()
  for (const key of [principal.id, ...principal.teams, EVERYBODY]) {
    // Own entries only: a principal id such as `constructor` must not find Object's constructor.
    for (const permission of own(firewall.permissions, key) ?? []) result.add(permission)
  }
  for (const grant of principal.grants) {
    if (ALL_FIREWALL_PERMISSIONS.has(grant as FirewallPermission)) result.add(grant as FirewallPermission)
  }
  return result
}

export function canOnFirewall(
  principal: Principal,
  firewall: Pick<Firewall, 'permissions'>,
  permission: FirewallPermission,
): boolean {
  return firewallPermissions(principal, firewall).has(permission)
}

/** A firewall the caller holds no permission on is answered as if it did not exist (404). */
export function canSeeFirewall(principal: Principal, firewall: Pick<Firewall, 'permissions'>): boolean {
  return firewallPermissions(principal, firewall).size > 0
}

/** Throws 404 when the caller cannot see the firewall, 403 naming the permission when it lacks it. */
export function requireFirewallPermission(
  principal: Principal,
  firewall: Pick<Firewall, 'id' | 'permissions'>,
  permission: FirewallPermission,
): void {
  const held = firewallPermissions(principal, firewall)
  if (held.size === 0) {
    throw firewallNotFound(firewall.id)
  }
  if (!held.has(permission)) throw forbidden(permission)
}

export function requireNamespacePermission(principal: Principal, permission: NamespacePermission): void {
  if (!hasNamespacePermission(principal, permission)) throw forbidden(permission)
}

/** A principal may only hand out permissions it holds itself (no escalation through teams or tokens). */
export function requireGrantable(principal: Principal, permissions: readonly string[]): void {
  if (isAdmin(principal)) return
  for (const permission of permissions) {
    if (!principal.grants.includes(permission as never))
      throw forbidden(permission, `cannot grant ${permission}: the caller does not hold it`)
  }
}
