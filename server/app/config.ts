import type { UpstreamAddressSettings } from '../net/address-policy'
import { parseTrustProxy, type TrustProxy } from '../http/trust-proxy'
import {
  parseUpstreamAddressSettings,
  parseUpstreamSizeSettings,
  type UpstreamSizeSettings,
} from '../net/upstream-settings'
import { parseLiveStreamLimit } from '../dashboard/live-slots'
import { parseDuration } from '../common/duration'
import { inventorySettings, type InventorySettings } from '../inventory/settings'

/** Operator settings read once from the environment. */
export interface AppConfig {
  port: number
  /** API and registry origin; null means "the request's own origin". */
  publicBaseUrl: string | null
  dashboardUrl: string | null
  dataDir: string
  redisUrl: string | null
  /** REDIS_CLUSTER_NODES as given (parsed and checked when storage opens: storage/redis-target.ts). */
  redisClusterNodes: string | null
  bootstrap: { token: string | null; namespace: string; user: string }
  /** API body limit in bytes. */
  bodyLimit: number
  /** UPSTREAM_ALLOWED_NETWORKS / UPSTREAM_DENIED_NETWORKS. */
  upstreamAddresses: UpstreamAddressSettings
  /** TRUST_PROXY (server/http/trust-proxy.ts); the edge reads the same value through `trustProxyFromEnv`. */
  trustProxy: TrustProxy
  /** UPSTREAM_MAX_BODY / UPSTREAM_MAX_ARTIFACT: the largest upstream answer read, in bytes. */
  upstreamSizes: UpstreamSizeSettings
  /** LOG_RETENTION: how long event, audit and firewall logs keep entries (the retention worker trims them). */
  logRetentionMs: number
  /** DASHBOARD_LIVE_STREAMS: live streams one process serves at once (server/dashboard/live-slots.ts). */
  liveStreams: number
  /** INVENTORY_RETENTION, and how long served versions are coalesced before a write. */
  inventory: InventorySettings
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const trimSlash = (url: string | undefined) => (url ? url.replace(/\/+$/, '') : null)
  return {
    port: Number(env.PORT || env.NITRO_PORT || 3000),
    publicBaseUrl: trimSlash(env.PUBLIC_BASE_URL),
    dashboardUrl: trimSlash(env.DASHBOARD_URL),
    dataDir: env.DATA_DIR || './.data',
    redisUrl: env.REDIS_URL || null,
    redisClusterNodes: env.REDIS_CLUSTER_NODES || null,
    bootstrap: {
      token: env.BOOTSTRAP_TOKEN || null,
      namespace: env.BOOTSTRAP_NAMESPACE || 'default',
      user: env.BOOTSTRAP_USER || 'owner',
    },
    bodyLimit: 1024 * 1024,
    // Throws NetworkSettingError (naming the variable) on an invalid CIDR: the service does not start.
    upstreamAddresses: parseUpstreamAddressSettings(env),
    // Throws TrustProxySettingError on `true` or a value that is neither a count nor CIDRs: no start.
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    upstreamSizes: parseUpstreamSizeSettings(env),
    liveStreams: parseLiveStreamLimit(env.DASHBOARD_LIVE_STREAMS),
    logRetentionMs: parseDuration(env.LOG_RETENTION || '30d'),
    // Throws naming INVENTORY_RETENTION on an invalid duration: no start.
    inventory: inventorySettings(env),
  }
}

/** The origin links in events point at when no request is at hand. */
export function eventLinkOrigin(config: Pick<AppConfig, 'dashboardUrl' | 'publicBaseUrl' | 'port'>): string {
  return config.dashboardUrl ?? config.publicBaseUrl ?? `http://localhost:${config.port}`
}
