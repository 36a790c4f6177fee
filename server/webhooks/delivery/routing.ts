import type { NamespaceEvent } from '../../events/schemas'
import { matchesSubscription } from '../configuration/event-types'
import type { WebhookRecord } from '../configuration/model'

/**
 * Whether an event of the namespace log belongs in a webhook's buffer: subscription match (system
 * events always), but a system event only to the webhook it is about, nothing from before the
 * webhook existed, and nothing from a time it was disabled. Judged by the event's time rather than
 * the current `enabled` alone, so events buffered before a webhook was disabled stay buffered
 * (a process that restarts meanwhile reads them again as waiting) until it is enabled or deleted.
 */
export function routes(event: NamespaceEvent, webhook: WebhookRecord): boolean {
  if (event.time < webhook.createdAt) return false
  if (event.type.startsWith('webhook.') && (event.data as { webhook?: string }).webhook !== webhook.id) return false
  if (wasPaused(event.time, webhook)) return false
  return matchesSubscription(event, webhook)
}

/** True when `time` falls in a span the webhook was disabled (or it is disabled and has no span: older documents). */
function wasPaused(time: string, webhook: WebhookRecord): boolean {
  const spans = webhook.pausedSpans ?? []
  if (!webhook.enabled && (spans.length === 0 || spans[spans.length - 1].until !== undefined)) return true
  return spans.some((span) => time >= span.from && (span.until === undefined || time < span.until))
}
