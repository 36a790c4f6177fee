import type { Backend } from '../../storage'
import { NamespaceRepository } from '../../storage/repositories/namespaces'
import { TokenRepository } from '../../storage/repositories/tokens'
import { FirewallRepository } from '../../storage/repositories/firewalls'
import { CollectionDocument } from '../../storage/repositories/collection'
import { EventLogRepository } from '../../storage/repositories/event-log'
import { LeaseRepository } from '../../storage/repositories/leases'
import { RetainedLogRepository } from '../../storage/repositories/retained-logs'
import { RegistryCacheStore } from '../../storage/repositories/registry-cache'
import { AdvisoryFeedRepository } from '../../storage/repositories/advisory-feed'
import { DashboardSessionRepository } from '../../storage/repositories/dashboard-sessions'
import { ExceptionRequestRepository } from '../../storage/repositories/exception-requests'
import { FirewallLogRepository } from '../../storage/repositories/firewall-log'
import { WebhookRepository } from '../../storage/repositories/webhooks'
import { WebhookRecordRepository } from '../../storage/repositories/webhook-records'
import type { RateCounter, RefusalTally, WebhookSignals } from '../../storage/ports'
import { keys } from '../../storage/repositories/keys'
import { secretBoxFromEnv, type SecretBox } from '../../storage/secrets/secret-box'
import { systemClock, type Clock } from '../common/clock'
import type { LicenseSet, Team } from '../namespace/schema'
import type { Exception, Firewall } from '../firewall/schema'
import type { FirewallLogEntry } from '../firewall/log-query'
import type { Actor, NamespaceEvent } from '../events/schemas'
import { configFromEnv, type AppConfig } from './config'
import { createUpstreamTransport, type UpstreamTransport } from '../registry/upstream/transport'
import { fixedAdvisories, type AdvisoryPort } from '../advisories/lookup'
import { InventoryRepository } from '../../storage/repositories/inventory'
import { ExposureRepository } from '../../storage/repositories/exposures'
import { InventoryRecorder } from '../inventory/recorder'
import { LiveRegistry } from '../observability/live-registry'
import { RequestsInFlight } from '../observability/requests-in-flight'

/** Everything the domain needs, built once at start-up (the composition root), over storage it never sees raw. */
export interface Services {
  /**
   * What start-up, readiness and shutdown need of the storage: no data access. Domain code reads
   * and writes through the repositories below, which own every key (storage/repositories/keys.ts).
   */
  storage: Pick<Backend, 'kind' | 'ping' | 'close'>
  clock: Clock
  config: AppConfig
  /** Seals stored secrets with SECRETS_KEY (passes them through when it is unset). */
  secrets: SecretBox
  namespaces: NamespaceRepository
  tokens: TokenRepository
  firewalls: FirewallRepository<Firewall, Actor>
  teams(ns: string): CollectionDocument<Team>
  licenseSets(ns: string): CollectionDocument<LicenseSet>
  /** The namespace event log (outbox) and the audit and firewall logs appended with it. */
  events: EventLogRepository<NamespaceEvent>
  leases: LeaseRepository
  retainedLogs: RetainedLogRepository
  registryCache: RegistryCacheStore
  /** OSV feed state and stored snapshots per ecosystem. */
  advisoryFeed: AdvisoryFeedRepository
  /** The advisory data rules and the registry read (the catalogue, wired in 00.services.ts). */
  advisories: AdvisoryPort
  dashboardSessions: DashboardSessionRepository
  exceptionRequests: ExceptionRequestRepository<Exception>
  firewallLog: FirewallLogRepository<FirewallLogEntry>
  /** Webhook documents, buffers and snapshots; delivery records and metrics; cross-process signals. */
  webhooks: WebhookRepository
  webhookRecords: WebhookRecordRepository
  webhookSignals: WebhookSignals
  /** Per-subject request counters and refusal tallies (shared on Redis, in memory otherwise). */
  rateCounter: RateCounter
  refusalTally: RefusalTally
  /** The upstream registries' connection agent (address policy) and answer size bounds. */
  upstreamTransport: UpstreamTransport
  /** Served versions per firewall: read by the inventory API, the SBOM and the exposure match. */
  inventoryStore: InventoryRepository
  /** Notes served versions and writes them in batches (closed at shutdown, which flushes it). */
  inventory: InventoryRecorder
  /** Served versions advisory data named later (written once each, with their event). */
  exposures: ExposureRepository<NamespaceEvent>
  /** Live actor states of this process: delivery and exception requests publish, the dashboard streams them. */
  live: LiveRegistry
  /** HTTP requests this process is handling now (counted by the composition root): delivery gives way to them. */
  requests: RequestsInFlight
}

export function createServices(
  backend: Backend,
  options: {
    clock?: Clock
    config?: AppConfig
    secrets?: SecretBox
    advisories?: AdvisoryPort
    /** The process's request count, when the composition root counts requests before storage is ready. */
    requests?: RequestsInFlight
  } = {},
): Services {
  const config = options.config ?? configFromEnv()
  const secrets = options.secrets ?? secretBoxFromEnv(process.env)
  const inventoryStore = new InventoryRepository(backend)
  return {
    storage: { kind: backend.kind, ping: () => backend.ping(), close: () => backend.close() },
    clock: options.clock ?? systemClock,
    config,
    secrets,
    namespaces: new NamespaceRepository(backend),
    tokens: new TokenRepository(backend),
    firewalls: new FirewallRepository<Firewall, Actor>(backend, secrets),
    // Token lookups keep the teams: each change announces itself, which ends them in every process.
    teams: (ns) => new CollectionDocument<Team>(backend, keys.teams(ns), { announce: { ns, scope: 'access' } }),
    licenseSets: (ns) => new CollectionDocument<LicenseSet>(backend, keys.licenseSets(ns)),
    events: new EventLogRepository<NamespaceEvent>(backend),
    leases: new LeaseRepository(backend),
    retainedLogs: new RetainedLogRepository(backend),
    registryCache: new RegistryCacheStore(backend),
    advisoryFeed: new AdvisoryFeedRepository(backend),
    advisories: options.advisories ?? fixedAdvisories(),
    dashboardSessions: new DashboardSessionRepository(backend),
    exceptionRequests: new ExceptionRequestRepository<Exception>(backend),
    firewallLog: new FirewallLogRepository<FirewallLogEntry>(backend),
    webhooks: new WebhookRepository(backend, secrets),
    webhookRecords: new WebhookRecordRepository(backend),
    webhookSignals: backend.signals.webhooks,
    rateCounter: backend.counters,
    refusalTally: backend.counters,
    upstreamTransport: createUpstreamTransport(config.upstreamAddresses, config.upstreamSizes),
    inventoryStore,
    inventory: new InventoryRecorder(inventoryStore, config.inventory.flushMs),
    exposures: new ExposureRepository<NamespaceEvent>(backend),
    live: new LiveRegistry(),
    requests: options.requests ?? new RequestsInFlight(),
  }
}
