import type { Firewall, FirewallPermission } from '../firewall/schema'
import { forbidden } from '../common/errors'
import { TimeSlice } from '../common/time-slice'
import { firewallPermissions } from './permissions'
import type { Principal } from './principal'

/**
 * The granting rule: a change of a firewall's `permissions` may only add
 * strings the caller itself holds on that firewall. Removing needs nothing beyond the edit's
 * own permission. Shared by PUT, rollback, clone and the dashboard through the firewall commands.
 */

type PermissionMap = Firewall['permissions']

// Own entries only: a principal key such as `constructor` must not reach Object.prototype.
function entryOf(map: PermissionMap, key: string): readonly FirewallPermission[] {
  return Object.hasOwn(map, key) ? map[key]! : []
}

/**
 * Every permission string `after` grants to some principal key that `before` did not grant to
 * that same key, each once, in first-seen order.
 * @example grantsAdded({ u: ['fw:read'] }, { u: ['fw:read', 'fw:delete'], everybody: ['fw:read'] })
 * // ['fw:delete', 'fw:read']
 */
export function grantsAdded(before: PermissionMap, after: PermissionMap): FirewallPermission[] {
  const added = new Set<FirewallPermission>()
  for (const key of Object.keys(after)) addedFor(before, after, key, added)
  return [...added]
}

/**
 * `grantsAdded`, pausing every 1,000 principals: a body of up to 1 MiB holds 47,500 of them
 * (CONTRACT.md 8; 35-190 ms in one go on a loaded 2-core machine).
 */
export async function grantsAddedInSlices(
  before: PermissionMap,
  after: PermissionMap,
  slice = new TimeSlice(),
): Promise<FirewallPermission[]> {
  const added = new Set<FirewallPermission>()
  const principals = Object.keys(after)
  for (let index = 0; index < principals.length; index++) {
    addedFor(before, after, principals[index], added)
    if (index % 1000 === 999) await slice.step()
  }
  return [...added]
}

/** Adds to `added` what `after` grants `key` that `before` did not. */
function addedFor(before: PermissionMap, after: PermissionMap, key: string, added: Set<FirewallPermission>): void {
  const previous = entryOf(before, key)
  for (const permission of entryOf(after, key)) if (!previous.includes(permission)) added.add(permission)
}

/** The first of `added` the principal does not hold on `firewall`, or undefined when it holds them all. */
export function firstUngrantable(
  principal: Principal,
  firewall: Pick<Firewall, 'permissions'>,
  added: readonly FirewallPermission[],
): FirewallPermission | undefined {
  if (added.length === 0) return undefined
  const held = firewallPermissions(principal, firewall)
  return added.find((permission) => !held.has(permission))
}

/**
 * Throws 403 naming the first string of `added` the principal does not hold on `heldOn` (the
 * firewall before the change, or the source of a clone).
 */
export function requireMayGrant(
  principal: Principal,
  heldOn: Pick<Firewall, 'id' | 'permissions'>,
  added: readonly FirewallPermission[],
): void {
  const missing = firstUngrantable(principal, heldOn, added)
  if (missing) {
    throw forbidden(missing, `cannot grant ${missing}: the caller does not hold it on firewall "${heldOn.id}"`)
  }
}
