import { observeUpstream } from '../../observability/metrics'
import { ADDRESS_REFUSED } from '../../net/guarded-agent'
import { loadUndici } from '../../net/undici'
import type { UpstreamTransport } from './transport'
import { limitUpstreamBody, type UpstreamBodyKind } from './body-limit'
import type { Upstream } from '../../firewall/schema'

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
const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000

/** The Authorization header for an upstream's own credentials, if it has any. */
export function upstreamAuthorization(upstream: Upstream): string | undefined {
  const credentials = upstream.credentials
  if (!credentials) return undefined
  if ('token' in credentials) return `Bearer ${credentials.token}`
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
}

/**
 * The Authorization header for a URL an upstream's answer names (a tarball, a NuGet resource or
 * registration page): the matching `artifactCredentials` host wins; else the upstream's
 * credentials, but only on the upstream's own origin, so an answer that points at a third-party
 * host never hands it them.
 * @example artifactAuthorization(upstream, 'https://cdn.example/pkg/-/pkg-1.0.0.tgz')
 */
export function artifactAuthorization(upstream: Upstream, url: string): string | undefined {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return undefined
  }
  const match = upstream.artifactCredentials?.find(
    (entry) =>
      entry.host.toLowerCase() === target.host.toLowerCase() ||
      entry.host.toLowerCase() === target.hostname.toLowerCase(),
  )
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

interface UpstreamRequest {
  method?: string
  headers?: Record<string, string>
  body?: Buffer | string
  /** Authorization to send; undefined sends none. */
  authorization?: string
  timeoutMs?: number
  /** Which size bound the answer's body is held to (`UPSTREAM_MAX_BODY` or `UPSTREAM_MAX_ARTIFACT`). */
  kind?: UpstreamBodyKind
}

/** Redirect hops followed per call. */
export const MAX_UPSTREAM_REDIRECTS = 5

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * One call to an upstream. Network failures, timeouts, refused addresses, too many redirects
 * and 5xx answers throw `UpstreamUnavailable`; every other status is returned for the caller
 * to interpret. Connections go through the transport's guarded agent (transport.ts).
 * The returned body is bounded (body-limit.ts): past its size bound, reading it throws
 * `UpstreamTooLarge`, and a declared `Content-Length` past it throws here.
 */
export async function callUpstream(
  transport: UpstreamTransport,
  upstream: Upstream,
  url: string,
  request: UpstreamRequest = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'user-agent': 'package-firewall', ...request.headers }
  if (request.authorization) headers.authorization = request.authorization
  let response: Response
  const started = performance.now()
  const host = new URL(url).host
  const elapsed = () => (performance.now() - started) / 1000
  try {
    response = await followRedirects(transport, upstream, url, {
      method: request.method ?? 'GET',
      headers,
      body:
        typeof request.body === 'string' || request.body === undefined
          ? request.body
          : new Uint8Array(request.body.buffer as ArrayBuffer, request.body.byteOffset, request.body.length),
      signal: AbortSignal.timeout(request.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS),
    })
  } catch (error) {
    if (error instanceof UpstreamUnavailable) {
      observeUpstream(host, elapsed(), 'redirect_refused')
      throw error
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    observeUpstream(host, elapsed(), cause?.code ?? (error as Error).name ?? 'fetch_failed')
    // A refusal by the address policy says why; other failures keep their short code.
    const short = cause?.code ?? (error as Error).name ?? 'fetch failed'
    const reason = cause?.code === ADDRESS_REFUSED ? (cause.message ?? 'address refused') : short
    throw new UpstreamUnavailable(upstream.id, reason)
  }
  observeUpstream(host, elapsed(), response.status >= 500 ? `status_${response.status}` : null)
  if (response.status >= 500) {
    // Not read: an error page could be as large as the upstream likes.
    await response.body?.cancel().catch(() => undefined)
    throw new UpstreamUnavailable(upstream.id, `status ${response.status}`)
  }
  return limitUpstreamBody(response, upstream.id, request.kind ?? 'metadata', transport.limits)
}

interface Hop {
  method: string
  headers: Record<string, string>
  body: string | Uint8Array | undefined
  signal: AbortSignal
}

/**
 * Fetches through the guarded agent, following at most MAX_UPSTREAM_REDIRECTS redirects to
 * http(s) only; every hop connects through the same policy. Authorization is dropped once a
 * hop leaves the origin it was meant for.
 */
async function followRedirects(
  transport: UpstreamTransport,
  upstream: Upstream,
  url: string,
  first: Hop,
): Promise<Response> {
  let target = new URL(url)
  let hop = first
  for (let redirects = 0; ; redirects++) {
    const init = { ...hop, redirect: 'manual' as const, dispatcher: await transport.agent() }
    const { fetch: undiciFetch } = await loadUndici()
    const response = (await undiciFetch(target, init)) as unknown as Response
    const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null
    if (!location) return response
    await response.body?.cancel().catch(() => undefined)
    if (redirects === MAX_UPSTREAM_REDIRECTS) {
      throw new UpstreamUnavailable(upstream.id, `more than ${MAX_UPSTREAM_REDIRECTS} redirects`)
    }
    let next: URL
    try {
      next = new URL(location, target)
    } catch {
      throw new UpstreamUnavailable(upstream.id, 'redirect to an invalid location')
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new UpstreamUnavailable(upstream.id, `redirect to a ${next.protocol.slice(0, -1)} URL refused`)
    }
    const headers = next.origin === target.origin ? hop.headers : withoutHeaders(hop.headers, /^authorization$/i)
    // 303 (and 301/302 after a POST, as browsers and npm do) continue as GET without a body.
    const status = response.status
    const asGet = status === 303 || ((status === 301 || status === 302) && hop.method === 'POST')
    hop = asGet
      ? { ...hop, method: 'GET', body: undefined, headers: withoutHeaders(headers, /^content-/i) }
      : { ...hop, headers }
    target = next
  }
}

function withoutHeaders(headers: Record<string, string>, names: RegExp): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.test(name)))
}
