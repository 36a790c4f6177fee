import type { WebhookRuntime } from '../webhooks/delivery/runtime'
import type { Services } from './services'
import type { OidcClient } from '../auth/oidc/client'

/**
 * What the composition root hands to the entry points (API router, registry proxy, dashboard,
 * plugins): the services, and the webhook runtime built over them with the settings parsed at
 * start-up. Each area takes only the ports it declares (docs/architecture.md, "Ports").
 */
export interface AppServices extends Services {
  webhookRuntime: WebhookRuntime
  /** Dashboard sign-in through OIDC_ISSUER, discovered at start; null when unset. */
  oidc: OidcClient | null
}

/**
 * The process-wide services, set once by the start-up plugin. Entry points await them, so a
 * request that arrives while storage is still being mounted simply waits. The only locator of
 * the process: route files hand `useServices` to the handler they build, plugins call it.
 */
let current: Promise<AppServices> | null = null
let resolveFirst: ((services: AppServices) => void) | null = null
const first = new Promise<AppServices>((resolve) => (resolveFirst = resolve))

export function setServices(services: Promise<AppServices>): void {
  current = services
  void services.then((ready) => resolveFirst?.(ready))
}

export function useServices(): Promise<AppServices> {
  return current ?? first
}
