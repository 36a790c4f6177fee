import type { NamespaceEvent } from '../../events/schemas'
import { matchesWebhook } from '../configuration/event-types'
import type { WebhookRecord } from '../configuration/model'

/**
 * Whether an event of the namespace log belongs in a webhook's buffer: subscription match (system
 * events always), but a system event only to the webhook it is about, and nothing from before the
 * webhook existed.
 */
export function routes(event: NamespaceEvent, webhook: WebhookRecord): boolean {
  if (event.time < webhook.createdAt) return false
  if (event.type.startsWith('webhook.') && (event.data as { webhook?: string }).webhook !== webhook.id) return false
  return matchesWebhook(event, webhook)
}
