import type { Firewall } from '../firewall/schema'
import type { Actor, NamespaceEvent } from '../events/schemas'
import type { Clock } from '../common/clock'
import type { CallContext } from '../auth/call-context'
import type { EventLogRepository } from '../../storage/repositories/event-log'
import type { FirewallRepository } from '../../storage/repositories/firewalls'
import type { LeaseRepository } from '../../storage/repositories/leases'
import type { WebhookRepository } from '../../storage/repositories/webhooks'
import type { WebhookRecordRepository } from '../../storage/repositories/webhook-records'
import type { WebhookSignals } from '../../storage/ports'
import type { WebhookSettings } from './configuration/settings'
import type { LookupAll } from './protocol/ssrf'
import type { LivePublisher } from '../observability/live-registry'
import type { RequestLoad } from '../observability/requests-in-flight'

/** What the webhook documents, records and signals live in: the runtime is built over these. */
export interface WebhookStorePorts {
  webhooks: WebhookRepository
  webhookRecords: WebhookRecordRepository
  webhookSignals: WebhookSignals
}

/**
 * What the webhook API (configuration/) uses: the documents and records, the event log it appends
 * `config.webhook.*` to, the firewalls a scope may name, and the runtime's settings and resolver.
 */
export interface WebhookApiPorts extends WebhookStorePorts {
  clock: Clock
  events: EventLogRepository<NamespaceEvent>
  firewalls: FirewallRepository<Firewall, Actor>
  /** The part of the runtime (delivery/runtime.ts) the API reads: settings parsed once, the resolver. */
  webhookRuntime: { settings: WebhookSettings; lookup?: LookupAll }
}

/** One call into the webhook API. */
export type WebhookCall = CallContext<WebhookApiPorts>

/**
 * What the delivery engine (delivery/) uses besides its runtime: the event log it follows and
 * appends to, leases, the live registry its actors publish to, and the process's request load
 * it gives way to.
 */
export interface WebhookEnginePorts {
  clock: Clock
  events: EventLogRepository<NamespaceEvent>
  leases: LeaseRepository
  live: LivePublisher
  requests: RequestLoad
}
