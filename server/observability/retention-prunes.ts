import type { Services } from '../app/services'
import { pruneMetricBuckets } from '../webhooks/delivery/metric-retention'
import { inventoryPrune } from '../inventory/retention'

/**
 * The stores the retention pass bounds besides the logs, by name (its report counts each):
 * webhook metric buckets past the retention, and dashboard sessions past their expiry that nobody
 * signed out of (also swept at each sign-in; this pass bounds them when nobody signs in for long),
 * and firewall inventories past INVENTORY_RETENTION (their own retention, swept hourly).
 * @example new RetentionWorker({ ..., prune: retentionPrunes(services, settings.retentionMs) })
 */
export function retentionPrunes(
  services: Pick<
    Services,
    'webhooks' | 'webhookRecords' | 'dashboardSessions' | 'namespaces' | 'inventoryStore' | 'config'
  >,
  retentionMs: number,
): Record<string, (now: number) => Promise<number>> {
  return {
    webhookMetricBuckets: (now) => pruneMetricBuckets(services.webhooks, services.webhookRecords, now, retentionMs),
    dashboardSessions: (now) => services.dashboardSessions.prune(now),
    inventory: inventoryPrune(services.namespaces, services.inventoryStore, services.config.inventory.retentionMs),
  }
}
