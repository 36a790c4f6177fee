import type { Firewall } from '../firewall/schema'
import type { Actor, NamespaceEvent } from '../events/schemas'
import type { Clock } from '../common/clock'
import type { CallContext } from '../auth/call-context'
import type { NamespaceRepository } from '../../storage/repositories/namespaces'
import type { TokenRepository } from '../../storage/repositories/tokens'
import type { FirewallRepository } from '../../storage/repositories/firewalls'
import type { EventLogRepository } from '../../storage/repositories/event-log'
import type { CollectionDocument } from '../../storage/repositories/collection'
import type { LicenseSet, Team } from './schema'

/**
 * What the namespace area uses: namespaces and their users, tokens, teams and license sets, the
 * firewalls that reference a license set, and the event log the audit log reads.
 */
export interface NamespacePorts {
  clock: Clock
  namespaces: NamespaceRepository
  tokens: TokenRepository
  firewalls: FirewallRepository<Firewall, Actor>
  events: EventLogRepository<NamespaceEvent>
  teams(ns: string): CollectionDocument<Team>
  licenseSets(ns: string): CollectionDocument<LicenseSet>
}

/** One call into the namespace area. */
export type NamespaceCall = CallContext<NamespacePorts>
