import { canOnFirewall } from '../auth/permissions'
import type { InventoryCall } from '../inventory/ports'

/**
 * How many open exposures each firewall the caller may read (`fw:read`) has, from the exposure
 * index alone (no exposure is read): the overview's count. Firewalls without one are absent.
 * @example const counts = await openExposureCounts(ctx) // Map { 'web' => 2 }
 */
export async function openExposureCounts(ctx: InventoryCall): Promise<Map<string, number>> {
  const readable = new Set(
    (await ctx.services.firewalls.list(ctx.ns))
      .filter((firewall) => canOnFirewall(ctx.principal, firewall, 'fw:read'))
      .map((firewall) => firewall.id),
  )
  const counts = new Map<string, number>()
  for (const entry of (await ctx.services.exposures.index(ctx.ns)).values())
    if (entry.status === 'open' && readable.has(entry.firewall))
      counts.set(entry.firewall, (counts.get(entry.firewall) ?? 0) + 1)
  return counts
}
