import type { CallContext } from '../auth/call-context'
import type { AppConfig } from '../app/config'
import type { ApiPorts } from '../http/ports'
import type { SecretBox } from '../../storage/secrets/secret-box'
import type { DashboardSessionRepository } from '../../storage/repositories/dashboard-sessions'

/**
 * What the dashboard uses: everything the API's operations call (its pages and forms call the
 * same domain functions), its sessions (sealed with the secret box), and the settings its pages
 * show (sign-in's default namespace, the registry origin of client snippets).
 */
export interface DashboardPorts extends ApiPorts {
  config: ApiPorts['config'] &
    Pick<AppConfig, 'bootstrap' | 'publicBaseUrl' | 'dashboardUrl' | 'port' | 'liveStreams' | 'logRetentionMs'>
  dashboardSessions: DashboardSessionRepository
  secrets: SecretBox
}

/** One call of a dashboard page or form into the domain. */
export type DashboardCall = CallContext<DashboardPorts>

/** How the dashboard's entry points get the ports: awaited per request (storage may still be mounting). */
export type DashboardServices = () => Promise<DashboardPorts>
