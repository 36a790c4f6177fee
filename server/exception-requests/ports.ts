import type { Exception } from '../firewall/schema'
import type { CallContext } from '../auth/call-context'
import type { AppConfig } from '../app/config'
import type { FirewallPorts } from '../firewall/ports'
import type { ExceptionRequestRepository } from '../../storage/repositories/exception-requests'
import type { LivePublisher } from '../observability/live-registry'

/**
 * What exception requests use: their own store, the firewall area (an approval edits the
 * firewall, a request from a block reads its log), the origin links in events point to, and
 * the live registry the dashboard's diagrams follow.
 */
export interface ExceptionRequestPorts extends FirewallPorts {
  config: FirewallPorts['config'] & Pick<AppConfig, 'dashboardUrl' | 'publicBaseUrl' | 'port'>
  exceptionRequests: ExceptionRequestRepository<Exception>
  live: Pick<LivePublisher, 'publish'>
}

/** One call into the exception-request area. */
export type ExceptionRequestCall = CallContext<ExceptionRequestPorts>
