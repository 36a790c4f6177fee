import type { FirewallLogEntry } from './log-query'
import type { Firewall } from './schema'
import type { Actor } from '../events/schemas'
import type { Clock } from '../common/clock'
import type { CallContext } from '../auth/call-context'
import type { AppConfig } from '../app/config'
import type { FirewallRepository } from '../../storage/repositories/firewalls'
import type { FirewallLogRepository } from '../../storage/repositories/firewall-log'
import type { CollectionDocument } from '../../storage/repositories/collection'
import type { LicenseSet } from '../namespace/schema'

/**
 * What the firewall area uses: the firewall documents and their log, the namespace's license
 * sets a rule may reference, and the upstream address policy a new upstream is checked against.
 */
export interface FirewallPorts {
  clock: Clock
  config: Pick<AppConfig, 'upstreamAddresses'>
  firewalls: FirewallRepository<Firewall, Actor>
  firewallLog: FirewallLogRepository<FirewallLogEntry>
  licenseSets(ns: string): CollectionDocument<LicenseSet>
}

/** One call into the firewall area. */
export type FirewallCall = CallContext<FirewallPorts>
