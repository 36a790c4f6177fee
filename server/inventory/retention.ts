import type { InventoryRepository } from '../../storage/repositories/inventory'
import type { NamespaceRepository } from '../../storage/repositories/namespaces'

/** How often the retention pass sweeps the inventory: its retention is counted in days. */
export const INVENTORY_SWEEP_MS = 3_600_000

/**
 * The inventory's part of the retention pass: every `INVENTORY_SWEEP_MS` at most, drops the
 * versions last served more than `retentionMs` ago (INVENTORY_RETENTION), firewall by firewall.
 * Returns a prune function for `RetentionWorker` (`prune`), which counts what it removed.
 * @example prune: { inventory: inventoryPrune(services.namespaces, services.inventoryStore, 400 * DAY) }
 */
export function inventoryPrune(
  namespaces: Pick<NamespaceRepository, 'ids'>,
  inventory: Pick<InventoryRepository, 'firewallsWithInventory' | 'prune'>,
  retentionMs: number,
): (now: number) => Promise<number> {
  let sweptAt = -Infinity
  return async (now) => {
    if (now - sweptAt < INVENTORY_SWEEP_MS) return 0
    sweptAt = now
    let removed = 0
    for (const ns of await namespaces.ids())
      for (const fw of await inventory.firewallsWithInventory(ns))
        removed += await inventory.prune(ns, fw, now - retentionMs)
    return removed
  }
}
