import type { Backend } from '../../storage'
import { NamespaceRepository } from '../../storage/repositories/namespaces'
import { TokenRepository } from '../../storage/repositories/tokens'
import { FirewallRepository } from '../../storage/repositories/firewalls'
import { CollectionDocument } from '../../storage/repositories/collection'
import { keys } from '../../storage/repositories/keys'
import { secretBoxFromEnv, type SecretBox } from '../../storage/secrets/secret-box'
import { systemClock, type Clock } from '../common/clock'
import type { LicenseSet, Team } from '../namespace/schema'
import { configFromEnv, type AppConfig } from './config'
import { configureUpstreamTransport } from '../registry/upstream-transport'

/** Everything the domain needs, built once at start-up (the composition root). */
export interface Services {
  backend: Backend
  clock: Clock
  config: AppConfig
  /** Seals stored secrets with SECRETS_KEY (passes them through when it is unset). */
  secrets: SecretBox
  namespaces: NamespaceRepository
  tokens: TokenRepository
  firewalls: FirewallRepository
  teams(ns: string): CollectionDocument<Team>
  licenseSets(ns: string): CollectionDocument<LicenseSet>
}

export function createServices(backend: Backend, options: { clock?: Clock; config?: AppConfig; secrets?: SecretBox } = {}): Services {
  const config = options.config ?? configFromEnv()
  // The upstream agent is one per process; it follows the composition root's settings.
  configureUpstreamTransport(config.upstreamAddresses)
  const secrets = options.secrets ?? secretBoxFromEnv()
  return {
    backend,
    clock: options.clock ?? systemClock,
    config,
    secrets,
    namespaces: new NamespaceRepository(backend),
    tokens: new TokenRepository(backend),
    firewalls: new FirewallRepository(backend, secrets),
    teams: (ns) => new CollectionDocument<Team>(backend, keys.teams(ns)),
    licenseSets: (ns) => new CollectionDocument<LicenseSet>(backend, keys.licenseSets(ns)),
  }
}
