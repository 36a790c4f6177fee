import type { FirewallCall } from './ports'
import { editFirewall } from './commands'
import { own } from '../common/own'
import type { Firewall, FirewallPermission } from './schema'

/**
 * Adds `permission` to a firewall's `permissions` entry of `principal` (a user id, team id or
 * `everybody`): a new version through the one edit path (history, event, the granting rule of
 * CONTRACT section 8). Granting what the principal already holds there changes nothing.
 */
export function grantOnFirewall(
  ctx: FirewallCall,
  firewallId: string,
  principal: string,
  permission: FirewallPermission,
): Promise<Firewall> {
  return editFirewall(ctx, firewallId, {
    permission: 'fw:update:config',
    apply: (current) => {
      const held = own(current.permissions, principal) ?? []
      if (held.includes(permission)) return current
      return { ...current, permissions: { ...current.permissions, [principal]: [...held, permission] } }
    },
    summary: () => `granted ${permission} to ${principal}`,
  })
}
