import type { Upstream } from '../../firewall/schema'
import type { ProxyRequest } from '../proxy-request'
import { RegistryError } from '../responses'
import { publishTarget, type UpstreamScope } from './selection'

/**
 * A document of one upstream through the registry cache when the upstream is `cached`
 * (short TTL, shared across processes); `fetch` returns null for "not there".
 */
export async function cachedDocument<T>(
  scope: UpstreamScope,
  upstream: Upstream,
  key: string,
  fetch: () => Promise<T | null>,
): Promise<T | null> {
  if (!upstream.cached) return fetch()
  const cacheScope = `${scope.ns}/${scope.firewall.id}/${upstream.id}`
  const hit = await scope.cache.getPackument<T>(cacheScope, key)
  if (hit) return hit.found ? hit.packument! : null
  const value = await fetch()
  await scope.cache.setPackument(cacheScope, key, { found: value !== null, packument: value ?? undefined })
  return value
}

/** Forgets a cached document of every upstream (after a write through the proxy). */
export async function forgetDocument(scope: UpstreamScope, key: string): Promise<void> {
  await Promise.all(
    scope.firewall.upstreams.map((u) => scope.cache.invalidate(`${scope.ns}/${scope.firewall.id}/${u.id}`, key)),
  )
}

/** The publish target (first internal upstream, else first with credentials), or 405. */
export function requirePublishTarget(request: ProxyRequest): Upstream {
  const target = publishTarget(request.firewall)
  if (!target)
    throw new RegistryError(
      405,
      `firewall ${request.firewall.id} accepts no publishes: a publish goes to its first upstream marked internal, ` +
        'else to its first upstream with credentials, and it has neither (docs/clients.md)',
    )
  return target
}

/** The secret an upstream's credentials carry (token, else password), for API-key headers. */
export function upstreamSecret(upstream: Upstream): string | undefined {
  const credentials = upstream.credentials
  if (!credentials) return undefined
  return 'token' in credentials ? credentials.token : credentials.password
}

/**
 * Relays an upstream's answer to a write (status, reason phrase, content type, body): the
 * client sees what the publish target said.
 */
export async function relayResponse(request: ProxyRequest, response: Response): Promise<void> {
  const bytes = Buffer.from(await response.arrayBuffer())
  const res = request.response
  res.statusCode = response.status
  if (response.statusText) res.statusMessage = response.statusText
  res.setHeader('content-type', response.headers.get('content-type') ?? 'text/plain')
  res.setHeader('content-length', bytes.length)
  res.end(bytes)
}
