import type { CallContext } from '../auth/call-context'
import type { AppConfig } from '../app/config'
import type { ApiPorts } from '../http/ports'
import type { PackageFactsPorts } from '../exception-requests/package-facts-gather'
import type { SecretBox } from '../../storage/secrets/secret-box'
import type { DashboardSessionRepository } from '../../storage/repositories/dashboard-sessions'
import type { OidcClient } from '../auth/oidc/client'
import type { LiveRegistry } from '../observability/live-registry'
import type { RequestsInFlight } from '../observability/requests-in-flight'

/**
 * What the dashboard uses: everything the API's operations call (its pages and forms call the
 * same domain functions), its sessions (sealed with the secret box), and the settings its pages
 * show (sign-in's default namespace, the registry origin of client snippets), and what the
 * reviewer's facts panel reads through the upstreams (their cache and transport, the advisory data).
 */
export interface DashboardPorts extends ApiPorts, Pick<PackageFactsPorts, 'registryCache' | 'upstreamTransport'> {
  advisories: ApiPorts['advisories'] & PackageFactsPorts['advisories']
  config: ApiPorts['config'] &
    Pick<
      AppConfig,
      | 'bootstrap'
      | 'publicBaseUrl'
      | 'dashboardUrl'
      | 'port'
      | 'liveStreams'
      | 'logRetentionMs'
      | 'dashboardSessionSecret'
    >
  dashboardSessions: DashboardSessionRepository
  secrets: SecretBox
  /** The OpenID Connect provider discovered at start (OIDC_ISSUER), or null: token sign-in only. */
  oidc: OidcClient | null
  /** The live actor states of this process, which the live streams follow. */
  live: LiveRegistry
  /** A live stream stops counting as a request once its first state is sent. */
  requests: Pick<RequestsInFlight, 'handled'>
}

/** One call of a dashboard page or form into the domain. */
export type DashboardCall = CallContext<DashboardPorts>

/** How the dashboard's entry points get the ports: awaited per request (storage may still be mounting). */
export type DashboardServices = () => Promise<DashboardPorts>
