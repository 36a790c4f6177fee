import type { DeliveryContext, DeliveryEvent } from '../../../machines/webhook-delivery/types'
import type { WebhookRecord } from '../configuration/model'

/**
 * What a stored webhook document tells its running actor: a quarantine released through the API
 * (a `releasedAt` at or after the quarantine began) and an enable or disable the actor has not
 * seen. Pure; the host sends the result.
 * @example documentChanges(doc, actor.getSnapshot(), now).forEach((event) => actor.send(event))
 */
export function documentChanges(
  doc: WebhookRecord,
  actor: { value: unknown; context: DeliveryContext },
  now: number,
): DeliveryEvent[] {
  const { value, context } = actor
  const changes: DeliveryEvent[] = []
  if (value === 'quarantined' && doc.releasedAt && context.quarantinedUntil !== null) {
    const since = doc.quarantinedAt
      ? Date.parse(doc.quarantinedAt)
      : context.quarantinedUntil - context.settings.quarantineMs
    if (Date.parse(doc.releasedAt) >= since) changes.push({ type: 'RELEASE', now })
  }
  if (doc.enabled === (context.disabled === true)) changes.push({ type: doc.enabled ? 'ENABLED' : 'DISABLED', now })
  return changes
}
