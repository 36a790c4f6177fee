import type { DeliveryContext, DeliveryEvent, WebhookActorSettings } from '../../../machines/webhook-delivery/types'
import type { WebhookRecord } from '../configuration/model'

/**
 * Where each of the actor's own settings comes from in the stored document. A new field of
 * `WebhookActorSettings` does not compile until it has a reader here.
 */
const FROM_DOCUMENT = {
  rateLimit: (doc) => doc.rateLimit ?? null,
} satisfies { [K in keyof WebhookActorSettings]-?: (doc: WebhookRecord) => WebhookActorSettings[K] }

/** The actor's own settings as `doc` holds them. */
export function actorSettingsOf(doc: WebhookRecord): WebhookActorSettings {
  return { rateLimit: FROM_DOCUMENT.rateLimit(doc) }
}

/**
 * What a stored webhook document tells its running actor, the one channel from the document to
 * the actor: a quarantine released through the API (a `releasedAt` at or after the quarantine
 * began), an enable or disable the actor has not seen, and its own settings (`rateLimit`) when
 * they differ from the actor's. Pure; the host sends the result at adoption and at every change.
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
  const settings = actorSettingsOf(doc)
  const differs = (Object.keys(FROM_DOCUMENT) as (keyof WebhookActorSettings)[]).some(
    (key) => settings[key] !== (context[key] ?? null),
  )
  if (differs) changes.push({ type: 'SETTINGS_CHANGED', settings, now })
  return changes
}
