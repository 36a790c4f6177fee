/** Storage keys, queue, log and lease names of the webhook engine. Ids never contain ':' or '/'. */
export const webhookKeys = {
  /** Index of a namespace's webhooks: `{ items: { [id]: true } }`. */
  index: (ns: string) => `ns:${ns}:wh-index`,
  /** Every webhook of every namespace (the delivery host restores all of them): `{ items: { "ns/id": true } }`. */
  globalIndex: () => 'wh-all',
  webhook: (ns: string, id: string) => `ns:${ns}:wh:${id}`,
  /** Persisted XState snapshot of the webhook's delivery actor. */
  snapshot: (ns: string, id: string) => `ns:${ns}:wh-snapshot:${id}`,
  /** Queue of events waiting for delivery, oldest first. */
  buffer: (ns: string, id: string) => `wh-buffer:${ns}:${id}`,
  /** The batch in flight: taken out of the buffer at its first attempt, removed when done. */
  batch: (ns: string, id: string) => `ns:${ns}:wh-batch:${id}`,
  deliveryIndex: (ns: string, id: string) => `ns:${ns}:wh-deliveries:${id}`,
  delivery: (ns: string, id: string, deliveryId: string) => `ns:${ns}:wh-delivery:${id}:${deliveryId}`,
  metrics: (ns: string, id: string, bucket: string, start: number) => `ns:${ns}:wh-metrics:${id}:${bucket}:${start}`,
  /** Cursor of the last event-log entry the router has routed. */
  routerCursor: () => 'wh-router-cursor',
  /** Leases: one router in the cluster, one owner per webhook actor. */
  routerLease: () => 'webhook-router',
  webhookLease: (ns: string, id: string) => `webhook:${ns}:${id}`,
}

/** The reference a delivery actor carries as its `webhookId`: `ns/id`. */
export const webhookRef = (ns: string, id: string) => `${ns}/${id}`

/** Splits a `ns/id` reference. */
export function parseWebhookRef(ref: string): { ns: string; id: string } {
  const slash = ref.indexOf('/')
  return { ns: ref.slice(0, slash), id: ref.slice(slash + 1) }
}
