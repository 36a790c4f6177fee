import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { WebhookSettings } from './settings'

/** Why a webhook URL or address was refused; problems are data, never thrown. */
export type UrlProblemCode = 'url_not_public' | 'url_scheme' | 'url_rejected_domain' | 'url_invalid'
export type UrlCheck = { ok: true; url: URL } | { ok: false; code: UrlProblemCode; message: string }

type PolicySettings = Pick<WebhookSettings, 'allowedNetworks' | 'rejectedDomains'>

/** `dns.lookup` with `all: true`, injectable for tests. */
export type LookupAll = (hostname: string) => Promise<LookupAddress[]>

const defaultLookupAll: LookupAll = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  )

/**
 * True when `address` (a literal IPv4/IPv6) may be contacted: a public unicast address, or one
 * inside an operator-allowed network. Embedded IPv4 (mapped, 6to4, Teredo, NAT64) is judged by
 * the embedded address, so `::ffff:127.0.0.1` is loopback.
 */
export function isAllowedAddress(address: string, settings: PolicySettings): boolean {
  const text = address.replace(/^\[|\]$/g, '')
  if (!ipaddr.isValid(text)) return false
  const parsed = ipaddr.parse(text)
  if (inAllowedNetworks(parsed, settings.allowedNetworks)) return true
  return isPublic(parsed, settings)
}

function inAllowedNetworks(address: ipaddr.IPv4 | ipaddr.IPv6, networks: string[]): boolean {
  const candidates = [address]
  // A v4 network also covers the v4-mapped form that dual-stack sockets report.
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    candidates.push((address as ipaddr.IPv6).toIPv4Address())
  }
  return networks.some((cidr) => {
    const range = ipaddr.parseCIDR(cidr)
    return candidates.some((candidate) => candidate.kind() === range[0].kind() && candidate.match(range))
  })
}

function isPublic(address: ipaddr.IPv4 | ipaddr.IPv6, settings: PolicySettings): boolean {
  if (address.kind() === 'ipv4') return address.range() === 'unicast'
  const v6 = address as ipaddr.IPv6
  const embedded = embeddedIPv4(v6)
  if (embedded) return isAllowedAddress(embedded.toString(), settings)
  // Everything ipaddr.js names (reserved, uniqueLocal, orchid, discard, ...) is special-purpose.
  // Global unicast is 2000::/3 only; anything outside it is unassigned or special.
  return v6.range() === 'unicast' && (v6.parts[0] & 0xe000) === 0x2000
}

/** The IPv4 address carried inside a v6 one, for the forms that route to it. */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = v6.parts
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])
  switch (v6.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052':
      return v4(p[6], p[7])
    case '6to4':
      return v4(p[1], p[2])
    case 'teredo':
      // Teredo carries the client's address inverted in the last 32 bits.
      return v4(p[6] ^ 0xffff, p[7] ^ 0xffff)
    default:
      // Deprecated IPv4-compatible form ::a.b.c.d
      if (p.slice(0, 6).every((part) => part === 0) && (p[6] !== 0 || p[7] > 1)) return v4(p[6], p[7])
      return null
  }
}

function isRejectedDomain(hostname: string, rejected: string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '')
  return rejected.some((domain) => host === domain || host.endsWith(`.${domain}`))
}

/**
 * Synchronous URL checks: parses, requires http/https, refuses rejected domains, and judges a
 * literal IP host (WHATWG parsing already turns `0x7f.1`, `2130706433`, `0177.0.0.1` into `127.0.0.1`).
 * @example checkUrlSyntax('ftp://x', settings) // { ok: false, code: 'url_scheme', ... }
 */
export function checkUrlSyntax(url: string, settings: PolicySettings): UrlCheck {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { ok: false, code: 'url_invalid', message: 'not a valid absolute URL' }
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { ok: false, code: 'url_scheme', message: `scheme must be http or https, not ${parsed.protocol.slice(0, -1)}` }
  }
  if (!parsed.hostname) return { ok: false, code: 'url_invalid', message: 'URL has no host' }
  if (parsed.username || parsed.password) {
    return { ok: false, code: 'url_invalid', message: 'URL must not carry credentials' }
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) {
    return isAllowedAddress(host, settings) ? { ok: true, url: parsed } : notPublic(host)
  }
  if (isRejectedDomain(host, settings.rejectedDomains)) {
    return { ok: false, code: 'url_rejected_domain', message: `host ${host} is on the rejected-domain list` }
  }
  return { ok: true, url: parsed }
}

/**
 * Full check for create/update: the syntax checks, then every address the name resolves to
 * must be allowed. A name that does not resolve is `url_invalid`.
 */
export async function resolveAndCheck(url: string, settings: PolicySettings, lookupAll: LookupAll = defaultLookupAll): Promise<UrlCheck> {
  const syntax = checkUrlSyntax(url, settings)
  if (!syntax.ok) return syntax
  const host = syntax.url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) return syntax
  let addresses: LookupAddress[]
  try {
    addresses = await lookupAll(host)
  } catch {
    // A name that does not resolve yet (receiver not deployed, resolver unreachable) cannot
    // reach anything: accept it; every attempt resolves it again through the guarded lookup.
    return syntax
  }
  const refused = addresses.find((entry) => !isAllowedAddress(entry.address, settings))
  return refused ? notPublic(refused.address, host) : syntax
}

function notPublic(address: string, host?: string): UrlCheck {
  const subject = host ? `host ${host} resolves to ${address}, which` : `address ${address}`
  return { ok: false, code: 'url_not_public', message: `${subject} is not a public address` }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** Error code used when a lookup or connection is refused by the policy. */
export const NOT_PUBLIC_ERROR = 'ERR_WEBHOOK_NOT_PUBLIC'

/**
 * A `lookup` for `http.request` that refuses names resolving to non-public addresses, so the
 * address checked is the address connected to (defeats DNS rebinding between check and use).
 */
export function guardedLookup(settings: PolicySettings, lookupAll: LookupAll = defaultLookupAll) {
  return (hostname: string, options: LookupOptions | LookupAllOptions | number, callback: LookupCallback): void => {
    const wantsAll = typeof options === 'object' && options !== null && options.all === true
    lookupAll(hostname).then(
      (addresses) => {
        const refused = addresses.find((entry) => !isAllowedAddress(entry.address, settings))
        if (refused || addresses.length === 0) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${refused?.address ?? 'nothing'}, which is not a public address`)
          error.code = NOT_PUBLIC_ERROR
          return callback(error, '')
        }
        if (wantsAll) return callback(null, addresses)
        callback(null, addresses[0].address, addresses[0].family)
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    )
  }
}
