/** The webhook engine's keys live with every other key (keys.ts); re-exported for its callers. */
export { webhookKeys } from './keys'

/** The reference a delivery actor carries as its `webhookId`: `ns/id`. */
export const webhookRef = (ns: string, id: string) => `${ns}/${id}`

/** Splits a `ns/id` reference. */
export function parseWebhookRef(ref: string): { ns: string; id: string } {
  const slash = ref.indexOf('/')
  return { ns: ref.slice(0, slash), id: ref.slice(slash + 1) }
}
