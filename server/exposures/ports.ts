import type { Clock } from '../common/clock'
import type { NamespaceEvent } from '../events/schemas'
import type { NamespaceRepository } from '../../storage/repositories/namespaces'
import type { InventoryRepository } from '../../storage/repositories/inventory'
import type { ExposureRepository } from '../../storage/repositories/exposures'

/** What the exposure detection uses: the namespaces, their inventories, and where exposures go. */
export interface ExposureDetectionPorts {
  clock: Clock
  namespaces: Pick<NamespaceRepository, 'ids'>
  inventoryStore: Pick<InventoryRepository, 'packages' | 'firewallsWithInventory' | 'firewallPackages'>
  exposures: Pick<ExposureRepository<NamespaceEvent>, 'recordNew'>
  /** This process's served versions not yet written: flushed before a match reads the inventory. */
  inventory: { flush(): Promise<void> }
}
