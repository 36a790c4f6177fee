import type { AppConfig } from '../app/config'
import type { EdgePorts } from '../http/ports'
import type { FirewallPorts } from '../firewall/ports'
import type { RegistryCacheStore } from '../../storage/repositories/registry-cache'
import type { UpstreamTransport } from './upstream/transport'
import type { AdvisoryPort } from '../advisories/lookup'
import type { InventoryNotes } from '../inventory/recorder'
import type { ServiceSecretPorts } from '../auth/service-secret'

/**
 * What the registry proxy uses: the edge (authentication, rate limits, refusal audits), the
 * firewalls with their log and license sets, the event log decisions are appended to, the
 * stored upstream cache, the transport upstream calls go through, the advisory data, and the origins rewritten
 * URLs and block messages point to, and the service secret (signed tarball notices).
 */
export interface RegistryPorts extends EdgePorts, Omit<FirewallPorts, 'config'>, ServiceSecretPorts {
  config: EdgePorts['config'] & Pick<AppConfig, 'publicBaseUrl' | 'dashboardUrl' | 'dashboardSessionSecret'>
  registryCache: RegistryCacheStore
  upstreamTransport: UpstreamTransport
  /** The advisory data rules decide on (the catalogue, wired at the composition root). */
  advisories: AdvisoryPort
  /** Where served versions are noted for the firewall's inventory (batched writes). */
  inventory: InventoryNotes
}
