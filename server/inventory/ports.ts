import type { Clock } from '../common/clock'
import type { CallContext } from '../auth/call-context'
import type { Firewall } from '../firewall/schema'
import type { Actor, NamespaceEvent } from '../events/schemas'
import type { FirewallRepository } from '../../storage/repositories/firewalls'
import type { InventoryRepository } from '../../storage/repositories/inventory'
import type { ExposureRepository } from '../../storage/repositories/exposures'

/**
 * What the inventory and exposure areas use: the firewalls (whose permissions decide what a
 * caller reads), the stored inventory and the exposures (with the event log they append to).
 */
export interface InventoryPorts {
  clock: Clock
  firewalls: FirewallRepository<Firewall, Actor>
  inventoryStore: InventoryRepository
  exposures: ExposureRepository<NamespaceEvent>
}

/** One call into the inventory area. */
export type InventoryCall = CallContext<InventoryPorts>
