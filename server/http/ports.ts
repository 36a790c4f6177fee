import type { Firewall } from '../firewall/schema'
import type { Actor, NamespaceEvent } from '../events/schemas'
import type { CallContext } from '../auth/call-context'
import type { AuthPorts } from '../auth/ports'
import type { AppConfig } from '../app/config'
import type { FirewallPorts } from '../firewall/ports'
import type { NamespacePorts } from '../namespace/ports'
import type { ExceptionRequestPorts } from '../exception-requests/ports'
import type { WebhookApiPorts } from '../webhooks/ports'
import type { AdvisoryPort } from '../advisories/lookup'
import type { InventoryPorts } from '../inventory/ports'
import type { NamespaceRepository } from '../../storage/repositories/namespaces'
import type { EventLogRepository } from '../../storage/repositories/event-log'
import type { FirewallRepository } from '../../storage/repositories/firewalls'
import type { RateCounter, RefusalTally } from '../../storage/ports'
import type { ExposureRepository } from '../../storage/repositories/exposures'

/**
 * What the edge every entry point shares uses (edge.ts, rate-limit.ts, audit.ts,
 * refusal-audit.ts): authentication, the rate counters and refusal tallies, the namespaces an
 * audit may go to and the event log it is appended to.
 */
export interface EdgePorts extends AuthPorts {
  config: Pick<AppConfig, 'bodyLimit' | 'rateLimits' | 'trustProxy'>
  namespaces: NamespaceRepository
  events: EventLogRepository<NamespaceEvent>
  rateCounter: RateCounter
  refusalTally: RefusalTally
}

/** What the path access checks (access.ts) use: the firewall a path names, or the exposure's firewall. */
export interface AccessPorts {
  firewalls: FirewallRepository<Firewall, Actor>
  exposures: Pick<ExposureRepository<NamespaceEvent>, 'get'>
}

/** What the advisory status operation reads: the process's advisory data. */
export interface AdvisoryStatusPorts {
  advisories: Pick<AdvisoryPort, 'status'>
}

/** What an API operation may use: the edge and every area the operation table calls into. */
export type ApiPorts = EdgePorts &
  AdvisoryStatusPorts &
  AccessPorts &
  FirewallPorts &
  NamespacePorts &
  ExceptionRequestPorts &
  WebhookApiPorts &
  InventoryPorts

/** One call through the API router. */
export type ApiCall = CallContext<ApiPorts>
