import type { Services } from '../../app/services'
import type { WebhookRepository } from '../../../storage/repositories/webhooks'
import type { WebhookRecordRepository } from '../../../storage/repositories/webhook-records'
import type { WebhookSignals } from '../../../storage/webhook-signals'
import { parseWebhookSettings, type WebhookSettings } from '../configuration/settings'
import type { LookupAll } from '../protocol/ssrf'

/** What the webhook API and engine share for one `Services` instance. */
export interface WebhookRuntime {
  settings: WebhookSettings
  webhooks: WebhookRepository
  records: WebhookRecordRepository
  signals: WebhookSignals
  /** Name resolution for URL checks and attempts; the system resolver when absent (tests inject one). */
  lookup?: LookupAll
}

const runtimes = new WeakMap<Services, WebhookRuntime>()

/**
 * The webhook runtime of `services`, built on first use with settings from the environment.
 * @example webhookRuntime(ctx.services).webhooks.get(ns, id)
 */
export function webhookRuntime(services: Services): WebhookRuntime {
  let runtime = runtimes.get(services)
  if (!runtime) {
    runtime = {
      settings: parseWebhookSettings(process.env),
      webhooks: services.webhooks,
      records: services.webhookRecords,
      signals: services.webhookSignals,
    }
    runtimes.set(services, runtime)
  }
  return runtime
}

/** Replaces settings or the resolver (tests, or a composition root that parsed settings itself). */
export function configureWebhookRuntime(services: Services, overrides: Partial<Pick<WebhookRuntime, 'settings' | 'lookup'>>): WebhookRuntime {
  const runtime = { ...webhookRuntime(services), ...overrides }
  runtimes.set(services, runtime)
  return runtime
}
