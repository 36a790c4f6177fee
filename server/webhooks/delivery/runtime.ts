import type { WebhookStorePorts } from '../ports'
import type { WebhookRepository } from '../../../storage/repositories/webhooks'
import type { WebhookRecordRepository } from '../../../storage/repositories/webhook-records'
import type { WebhookSignals } from '../../../storage/ports'
import type { WebhookSettings } from '../configuration/settings'
import type { LookupAll } from '../protocol/ssrf'

/** What the webhook API and engine of one process share: settings parsed once, the repositories, the resolver. */
export interface WebhookRuntime {
  settings: WebhookSettings
  webhooks: WebhookRepository
  records: WebhookRecordRepository
  signals: WebhookSignals
  /** Name resolution for URL checks and attempts; the system resolver when absent (tests inject one). */
  lookup?: LookupAll
}

/**
 * The runtime over `services` with settings the composition root parsed (the webhooks plugin
 * from the environment; tests and benches with their own).
 * @example createWebhookRuntime(services, webhookSettings)
 */
export function createWebhookRuntime(
  services: WebhookStorePorts,
  settings: WebhookSettings,
  lookup?: LookupAll,
): WebhookRuntime {
  return {
    settings,
    webhooks: services.webhooks,
    records: services.webhookRecords,
    signals: services.webhookSignals,
    ...(lookup ? { lookup } : {}),
  }
}
