/** Operator settings read once from the environment (CONTRACT section 1). */
export interface AppConfig {
  port: number
  /** API and registry origin; null means "the request's own origin". */
  publicBaseUrl: string | null
  dashboardUrl: string | null
  dataDir: string
  redisUrl: string | null
  bootstrap: { token: string | null; namespace: string; user: string }
  /** API body limit in bytes. */
  bodyLimit: number
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const trimSlash = (url: string | undefined) => (url ? url.replace(/\/+$/, '') : null)
  return {
    port: Number(env.PORT || env.NITRO_PORT || 3000),
    publicBaseUrl: trimSlash(env.PUBLIC_BASE_URL),
    dashboardUrl: trimSlash(env.DASHBOARD_URL),
    dataDir: env.DATA_DIR || './.data',
    redisUrl: env.REDIS_URL || null,
    bootstrap: {
      token: env.BOOTSTRAP_TOKEN || null,
      namespace: env.BOOTSTRAP_NAMESPACE || 'default',
      user: env.BOOTSTRAP_USER || 'owner',
    },
    bodyLimit: 1024 * 1024,
  }
}

/** The origin links in events point at when no request is at hand. */
export function eventLinkOrigin(config: AppConfig): string {
  return config.dashboardUrl ?? config.publicBaseUrl ?? `http://localhost:${config.port}`
}
