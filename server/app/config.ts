import type { UpstreamAddressSettings } from '../net/address-policy'
import { parseTrustProxy, type TrustProxy } from '../http/trust-proxy'
import {
  parseUpstreamAddressSettings,
  parseUpstreamSizeSettings,
  type UpstreamSizeSettings,
} from '../net/upstream-settings'
import { parseLiveStreamLimit } from '../dashboard/live-slots'
import { inventorySettings, type InventorySettings } from '../inventory/settings'
import { rateLimitSettings, type RateLimitSettings } from '../http/rate-limit-settings'
import { retentionSettings, type RetentionSettings } from '../observability/retention'
import { advisoryFeedSettings, type AdvisoryFeedSettings } from '../advisories/settings'
import { idleScavengeSetting } from './quiet-scavenge'

/**
 * Operator settings read once from the environment. This module and the composition root
 * (server/plugins/, the Nitro entry server/app/node-server.ts, the logger) are the only readers of
 * `process.env`: every area receives its settings as values, through its ports.
 */
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
  /** TRUST_PROXY (server/http/trust-proxy.ts): the edge applies it to every request (request-origin.ts). */
  trustProxy: TrustProxy
  /** UPSTREAM_MAX_BODY / UPSTREAM_MAX_ARTIFACT: the largest upstream answer read, in bytes. */
  upstreamSizes: UpstreamSizeSettings
  /** LOG_RETENTION: how long event, audit and firewall logs keep entries (the retention worker trims them). */
  logRetentionMs: number
  /** LOG_RETENTION_INTERVAL: time between the retention worker's passes. */
  logRetentionIntervalMs: number
  /** API_RATE_LIMIT, REGISTRY_RATE_LIMIT, AUTH_FAILURE_RATE_LIMIT (server/http/rate-limit.ts). */
  rateLimits: RateLimitSettings
  /** METRICS_TOKEN: the bearer token `GET /metrics` asks for; null leaves it open. */
  metricsToken: string | null
  /** DASHBOARD_SESSION_SECRET: seals dashboard cookies; null keeps a generated one in storage. */
  dashboardSessionSecret: string | null
  /** ADVISORY_DIR, and the OSV feed (ADVISORY_FEED_URL, ADVISORY_REFRESH, ADVISORY_MAX_ENTRIES). */
  advisories: { dir: string | null; feed: AdvisoryFeedSettings }
  /** DASHBOARD_LIVE_STREAMS: live streams one process serves at once (server/dashboard/live-slots.ts). */
  liveStreams: number
  /** INVENTORY_RETENTION, and how long served versions are coalesced before a write. */
  inventory: InventorySettings
  /** IDLE_SCAVENGE: collect the young generation when the event loop goes quiet (server/app/quiet-scavenge.ts). */
  idleScavenge: boolean
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // Throws on an invalid LOG_RETENTION or *_RATE_LIMIT: the start stops rather than keep logs forever.
  const retention: RetentionSettings = retentionSettings(env)
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
    logRetentionMs: retention.retentionMs,
    logRetentionIntervalMs: retention.intervalMs,
    rateLimits: rateLimitSettings(env),
    metricsToken: env.METRICS_TOKEN || null,
    dashboardSessionSecret: env.DASHBOARD_SESSION_SECRET || null,
    // Throws naming the ADVISORY_* variable on an invalid value: no start.
    advisories: { dir: env.ADVISORY_DIR || null, feed: advisoryFeedSettings(env) },
    // Throws naming INVENTORY_RETENTION on an invalid duration: no start.
    inventory: inventorySettings(env),
    // Throws naming IDLE_SCAVENGE on anything but on/off: no start.
    idleScavenge: idleScavengeSetting(env),
  }
}

/** The origin links in events point at when no request is at hand. */
export function eventLinkOrigin(config: Pick<AppConfig, 'dashboardUrl' | 'publicBaseUrl' | 'port'>): string {
  return config.dashboardUrl ?? config.publicBaseUrl ?? `http://localhost:${config.port}`
}
