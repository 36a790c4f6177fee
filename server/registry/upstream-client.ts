import { observeUpstream } from '../observability/metrics'
import type { Upstream } from '../firewall/schema'

/**
 * An upstream could not be reached or answered with a server error. The proxy answers 503
 * with Retry-After (so clients retry) and logs it; it never becomes an event.
 */
export class UpstreamUnavailable extends Error {
  constructor(
    readonly upstream: string,
    readonly reason: string,
  ) {
    super(`upstream ${upstream} unavailable: ${reason}`)
  }
}

/** Default time an upstream call may take before it counts as unreachable. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000

/** The Authorization header for an upstream's own credentials, if it has any. */
export function upstreamAuthorization(upstream: Upstream): string | undefined {
  const credentials = upstream.credentials
  if (!credentials) return undefined
  if ('token' in credentials) return `Bearer ${credentials.token}`
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
}

/**
 * The Authorization header for a tarball URL: the matching `artifactCredentials` host wins;
 * else the upstream's credentials, but only on the upstream's own origin, so a packument that
 * points tarballs at a third-party host never receives them.
 * @example artifactAuthorization(upstream, 'https://cdn.example/pkg/-/pkg-1.0.0.tgz')
 */
export function artifactAuthorization(upstream: Upstream, url: string): string | undefined {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return undefined
  }
  const match = upstream.artifactCredentials?.find((entry) => entry.host.toLowerCase() === target.host.toLowerCase() || entry.host.toLowerCase() === target.hostname.toLowerCase())
  if (match) return `Bearer ${match.credentials.token}`
  return new URL(upstream.endpoint).origin === target.origin ? upstreamAuthorization(upstream) : undefined
}

/**
 * `{endpoint}/{path}` without doubling slashes; the endpoint may carry a path prefix.
 * @example upstreamUrl({ endpoint: 'https://r.example/npm/' }, '@a%2fb') // 'https://r.example/npm/@a%2fb'
 */
export function upstreamUrl(upstream: Pick<Upstream, 'endpoint'>, path: string): string {
  return `${upstream.endpoint.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
}

/** npm's escaped form of a package name in registry paths: `@scope%2fname`. */
export function escapePackageName(name: string): string {
  return name.startsWith('@') ? `@${encodeURIComponent(name.slice(1))}` : encodeURIComponent(name)
}

export interface UpstreamRequest {
  method?: string
  headers?: Record<string, string>
  body?: Buffer | string
  /** Authorization to send; undefined sends none. */
  authorization?: string
  timeoutMs?: number
}

/**
 * One call to an upstream. Network failures, timeouts and 5xx answers throw
 * `UpstreamUnavailable`; every other status is returned for the caller to interpret.
 */
export async function callUpstream(upstream: Upstream, url: string, request: UpstreamRequest = {}): Promise<Response> {
  const headers: Record<string, string> = { 'user-agent': 'package-firewall', ...request.headers }
  if (request.authorization) headers.authorization = request.authorization
  let response: Response
  const started = performance.now()
  const host = new URL(url).host
  try {
    response = await fetch(url, {
      method: request.method ?? 'GET',
      headers,
      body: typeof request.body === 'string' || request.body === undefined ? request.body : new Uint8Array(request.body.buffer as ArrayBuffer, request.body.byteOffset, request.body.length),
      redirect: 'follow',
      signal: AbortSignal.timeout(request.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS),
    })
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code
    observeUpstream(host, (performance.now() - started) / 1000, cause ?? (error as Error).name ?? 'fetch_failed')
    throw new UpstreamUnavailable(upstream.id, cause ?? (error as Error).name ?? 'fetch failed')
  }
  observeUpstream(host, (performance.now() - started) / 1000, response.status >= 500 ? `status_${response.status}` : null)
  if (response.status >= 500) {
    // Drain so the keep-alive socket is reused.
    await response.arrayBuffer().catch(() => undefined)
    throw new UpstreamUnavailable(upstream.id, `status ${response.status}`)
  }
  return response
}
