import type { H3Event } from 'h3'
import { HttpProblem } from './problem'
import type { Socket } from 'node:net'
import { forwardedView, type ForwardedView, type TrustProxy } from './trust-proxy'

/**
 * The one place the API, the registry and the dashboard learn who called and by which origin,
 * under the one `TRUST_PROXY` policy (trust-proxy.ts, parsed once into `config.trustProxy` and
 * passed by the caller): `X-Forwarded-*` is believed only from a proxy the operator named, so a
 * client cannot pick the address its per-address limits count, nor the host written into
 * tarball URLs and block links. A request's view is worked out once, under the policy of its
 * first call.
 */

const views = new WeakMap<H3Event, ForwardedView>()
/**
 * Without a trusted proxy the view is the socket peer's alone: worked out once per connection
 * (#27: a kept-alive client would otherwise have its address parsed on every request).
 */
const peerViews = new WeakMap<Socket, { policy: TrustProxy; view: ForwardedView }>()

function viewOf(event: H3Event, policy: TrustProxy): ForwardedView {
  let view = views.get(event)
  if (!view) {
    const { socket, headers } = event.node.req
    if (policy.kind === 'none') {
      const known = peerViews.get(socket)
      view = known?.policy === policy ? known.view : forwardedView(policy, socket.remoteAddress, headers)
      if (!known || known.policy !== policy) peerViews.set(socket, { policy, view })
    } else view = forwardedView(policy, socket.remoteAddress, headers)
    views.set(event, view)
  }
  return view
}

/** The client's address (canonical form), or undefined when the socket has none. */
export function clientAddress(event: H3Event, policy: TrustProxy): string | undefined {
  return viewOf(event, policy).address
}

/** `https` when the connection is TLS or a trusted proxy says the client used it, else `http`. */
export function requestProtocol(event: H3Event, policy: TrustProxy): 'http' | 'https' {
  const forwarded = viewOf(event, policy).proto
  if (forwarded) return forwarded
  return (event.node.req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'
}

/**
 * A `host[:port]` a URL may be built from: a DNS name (letters, digits, `-`, `_`, dots), an IPv4
 * address or a bracketed IPv6 one, with an optional port. Canonical (lower-cased); null when it is not one.
 * @example validHost('Registry.Example:8443') // 'registry.example:8443'
 */
export function validHost(text: string | undefined): string | null {
  if (!text || text.length > 261) return null
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)(?::(\d{1,5}))?$/.exec(text)
  if (!match) return null
  const [, name, port] = match
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return null
  if (!name.startsWith('[') && (name.length > 253 || name.split('.').some((label) => label.length > 63))) return null
  // The URL parser is what will read it back (tarball URLs, links): what it refuses
  // (`999.1.1.1`, a bad IPv6) is refused here, and its spelling is the one kept.
  try {
    return new URL(`http://${text}/`).host
  } catch {
    return null
  }
}

/** The host the client called (`X-Forwarded-Host` of a trusted proxy, else `Host`); null when invalid. */
export function requestHost(event: H3Event, policy: TrustProxy): string | null {
  return validHost(viewOf(event, policy).host ?? event.node.req.headers.host)
}

/**
 * The origin the client called, for URLs written into answers when `PUBLIC_BASE_URL` is unset.
 * @throws HttpProblem 400 `invalid_host` when the host is missing or not a host name
 * @example requestOrigin(event, config.trustProxy) // 'https://firewall.example'
 */
export function requestOrigin(event: H3Event, policy: TrustProxy): string {
  const host = requestHost(event, policy)
  if (!host) throw new HttpProblem(400, 'invalid_host', 'the Host header is not a valid host name (with optional port)')
  return `${requestProtocol(event, policy)}://${host}`
}
