import type { Firewall, Upstream } from '../../firewall/schema'
import type { RegistryCache } from '../cache'
import { UpstreamUnavailable } from './client'
import type { UpstreamTransport } from './transport'

/** The firewall, cache and timeout one request's upstream calls use. */
export interface UpstreamScope {
  ns: string
  firewall: Firewall
  cache: RegistryCache
  /** The agent and size bounds upstream calls go through. */
  transport: UpstreamTransport
  timeoutMs?: number
  /** Failed calls the request got past (a public upstream skipped); the handler logs them (upstream-failures.ts). */
  failures?: UpstreamUnavailable[]
}

/**
 * The order names are looked up in: internal upstreams first (in their configured order),
 * then the public ones. A name an internal registry holds is therefore never requested from
 * a public one, whatever the configured order (the dependency-confusion guard).
 */
export function lookupOrder(upstreams: readonly Upstream[]): Upstream[] {
  return [...upstreams.filter((u) => u.internal), ...upstreams.filter((u) => !u.internal)]
}

/**
 * Asks the firewall's upstreams in lookup order (internal first: a name an internal upstream
 * holds is never looked up publicly) until `lookup` returns something. An unreachable
 * internal upstream stops the search; an unreachable public one is skipped, and rethrown when
 * nobody later has the name. Null when every upstream answered "not found".
 * @example await firstFound(scope, (upstream) => fetchProjectPage(scope, upstream, name))
 */
export async function firstFound<T>(
  scope: UpstreamScope,
  lookup: (upstream: Upstream) => Promise<T | null>,
): Promise<{ value: T; upstream: Upstream } | null> {
  let unavailable: UpstreamUnavailable | null = null
  for (const upstream of lookupOrder(scope.firewall.upstreams)) {
    try {
      const value = await lookup(upstream)
      if (value !== null) return { value, upstream }
    } catch (error) {
      if (!(error instanceof UpstreamUnavailable) || upstream.internal) throw error
      scope.failures?.push(error)
      unavailable ??= error
    }
  }
  if (unavailable) throw unavailable
  return null
}

/** Where writes go: the first internal upstream, else the first with credentials. */
export function publishTarget(firewall: Pick<Firewall, 'upstreams'>): Upstream | undefined {
  return firewall.upstreams.find((u) => u.internal) ?? firewall.upstreams.find((u) => u.credentials)
}
