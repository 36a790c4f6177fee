import type { Services } from './services'

/**
 * The process-wide services, set once by the start-up plugin. Routes await them, so a
 * request that arrives while storage is still being mounted simply waits.
 */
let current: Promise<Services> | null = null
let resolveFirst: ((services: Services) => void) | null = null
const first = new Promise<Services>((resolve) => (resolveFirst = resolve))

export function setServices(services: Promise<Services>): void {
  current = services
  void services.then((ready) => resolveFirst?.(ready))
}

export function useServices(): Promise<Services> {
  return current ?? first
}
