import type { Exception } from '../firewall/schema'
import type { CallContext } from '../auth/call-context'
import type { AppConfig } from '../app/config'
import type { FirewallPorts } from '../firewall/ports'
import type { ExceptionRequestRepository } from '../../storage/repositories/exception-requests'

/**
 * What exception requests use: their own store, the firewall area (an approval edits the
 * firewall, a request from a block reads its log), and the origin links in events point to.
 */
export interface ExceptionRequestPorts extends FirewallPorts {
  config: FirewallPorts['config'] & Pick<AppConfig, 'dashboardUrl' | 'publicBaseUrl' | 'port'>
  exceptionRequests: ExceptionRequestRepository<Exception>
}

/** One call into the exception-request area. */
export type ExceptionRequestCall = CallContext<ExceptionRequestPorts>
