import type { Upstream } from './schema'

/**
 * Credentials belong to their endpoint: an upstream's `credentials` and
 * `artifactCredentials` were given for one endpoint, and no edit that keeps them may point them
 * somewhere else without `fw:update:credentials`.
 */

/**
 * Two endpoints are the same when they are the same URL once normalised (host case, default
 * port); any other difference, a path included, counts as a new endpoint.
 * @example sameEndpoint('https://R.example:443/npm', 'https://r.example/npm') // true
 */
export function sameEndpoint(a: string, b: string): boolean {
  if (a === b) return true
  try {
    return new URL(a).href === new URL(b).href
  } catch {
    return false
  }
}

/** Does this upstream hold any stored secret (its own credentials or an artifact host token)? */
export function holdsSecrets(upstream: Upstream): boolean {
  return upstream.credentials !== undefined || (upstream.artifactCredentials?.length ?? 0) > 0
}

/**
 * Ids of upstreams that held a secret before the change and whose endpoint the change moves
 * (the id kept, the endpoint different): their secrets would follow to the new endpoint.
 */
export function endpointsMovedWithSecrets(before: readonly Upstream[], after: readonly Upstream[]): string[] {
  const previous = new Map(before.map((upstream) => [upstream.id, upstream]))
  return after
    .filter((upstream) => {
      const old = previous.get(upstream.id)
      return old !== undefined && holdsSecrets(old) && !sameEndpoint(old.endpoint, upstream.endpoint)
    })
    .map((upstream) => upstream.id)
}
