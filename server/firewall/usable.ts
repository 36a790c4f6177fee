import type { FirewallCall } from './ports'
import { canOnFirewall, requireFirewallPermission } from '../auth/permissions'
import { firewallNotFound } from '../common/errors'
import type { Ecosystem, Firewall } from './schema'

/**
 * What a caller who may install through a firewall (`fw:access`) learns about it without
 * `fw:read`: who it is and what it proxies, never its rules, upstreams or permissions.
 */
export interface UsableFirewall {
  id: string
  name: string
  ecosystem: Ecosystem
  description: string
  /** Whether the caller may also read the configuration (`fw:read`). */
  readable: boolean
}

const summary = (ctx: FirewallCall, firewall: Firewall): UsableFirewall => ({
  id: firewall.id,
  name: firewall.name,
  ecosystem: firewall.ecosystem,
  description: firewall.description,
  readable: canOnFirewall(ctx.principal, firewall, 'fw:read'),
})

/**
 * The firewalls the caller may install through (`fw:access`), by id.
 * @example const mine = await usableFirewalls(ctx) // [{ id: 'web', ecosystem: 'npm', readable: false, ... }]
 */
export async function usableFirewalls(ctx: FirewallCall): Promise<UsableFirewall[]> {
  const all = await ctx.services.firewalls.list(ctx.ns)
  return all
    .filter((fw) => canOnFirewall(ctx.principal, fw, 'fw:access'))
    .map((fw) => summary(ctx, fw))
    .sort((a, b) => a.id.localeCompare(b.id))
}

/** One firewall the caller may install through: 404 when it cannot see it, 403 without `fw:access`. */
export async function usableFirewall(ctx: FirewallCall, id: string): Promise<UsableFirewall> {
  const firewall = await ctx.services.firewalls.get(ctx.ns, id)
  if (!firewall) throw firewallNotFound(id)
  requireFirewallPermission(ctx.principal, firewall, 'fw:access')
  return summary(ctx, firewall)
}
