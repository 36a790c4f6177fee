import type { Backend } from '../backend'
import { PAGE_SIZE, type DeliveryIndex } from '../repositories/delivery-index'
import { webhookKeys } from '../repositories/keys'
import { parseWebhookRef } from '../repositories/webhook-keys'

/**
 * Layout 4 -> 5: each webhook's delivery index, one list of up to 128 ids, becomes the paged index
 * (repositories/delivery-index.ts): the newest 16 stay the newest, the others become the oldest
 * kept, dropped one per new delivery. The release reads a list as well; the step makes every
 * index small at once, and the layout it records keeps an older release (which would write the
 * list over the pages) from starting on this storage. Idempotent. Returns how many it changed.
 */
export async function pageDeliveryIndexes(backend: Backend): Promise<number> {
  const refs = Object.keys(
    (await backend.keyValue.get<{ items: Record<string, true> }>(webhookKeys.globalIndex()))?.items ?? {},
  )
  let changed = 0
  for (const ref of refs) {
    const { ns, id } = parseWebhookRef(ref)
    const key = webhookKeys.deliveryIndex(ns, id)
    changed += await backend.keyValue.transact([key], (values) => {
      const index = values.get(key) as DeliveryIndex | null
      if (!index || index.pages || index.tail || index.ids.length <= PAGE_SIZE) return { writes: {}, result: 0 }
      const paged: DeliveryIndex = { ids: index.ids.slice(0, PAGE_SIZE), tail: index.ids.slice(PAGE_SIZE) }
      return { writes: { set: { [key]: paged } }, result: 1 }
    })
  }
  return changed
}
