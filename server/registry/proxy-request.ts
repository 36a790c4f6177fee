import type { RegistryPorts } from './ports'
import type { Principal, RequestMeta } from '../auth/principal'
import type { AdvisoryLookup } from '../advisories/lookup'
import type { Firewall } from '../firewall/schema'
import type { RegistryExchange } from './exchange'
import type { UpstreamScope } from './upstream/selection'

/** One authenticated, authorised request to a firewall's registry URL (method, headers, body, response). */
export interface ProxyRequest extends RegistryExchange {
  services: RegistryPorts
  ns: string
  firewall: Firewall
  principal: Principal
  meta: RequestMeta
  /** Path below `/registry/{ns}/{fw}`, starting with `/`, still URL-encoded, no query. */
  path: string
  query: URLSearchParams
  /** `{origin}/registry/{ns}/{fw}/`: what rewritten URLs start with. */
  baseUrl: string
  /** Dashboard origin (`DASHBOARD_URL`, else the origin the client used): block messages link there. */
  dashboardUrl: string
  /** Firewall, cache and timeout for upstream calls. */
  scope: UpstreamScope
  advisories: AdvisoryLookup
  /** Largest publish body accepted, in bytes. */
  maxBodyBytes: number
}
