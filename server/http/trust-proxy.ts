import type { IncomingHttpHeaders } from 'node:http'
import ipaddr from 'ipaddr.js'
import { normalizeCidr } from '../net/address-policy'

/**
 * `TRUST_PROXY`: which `X-Forwarded-*` headers are believed, and of which hop.
 * - `none` (unset, `0` or `false`): no header is believed; the socket peer is the client.
 * - `hops`: that many reverse proxies stand in front; the client is the Nth `X-Forwarded-For`
 *   entry from the right (Express `trust proxy = N`).
 * - `networks`: the proxies' ranges. The socket peer must lie in them for any header to count;
 *   entries are then skipped from the right while they lie in them (Express / proxy-addr with a
 *   CIDR list).
 * `true` is refused: it meant "believe the leftmost entry", which is whatever the client wrote.
 */
export type TrustProxy =
  | { kind: 'none' }
  | { kind: 'hops'; hops: number }
  | { kind: 'networks'; networks: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][] }

/** A `TRUST_PROXY` value the service cannot use: it refuses to start, naming the setting. */
export class TrustProxySettingError extends Error {
  constructor(message: string) {
    super(`TRUST_PROXY: ${message}`)
    this.name = 'TrustProxySettingError'
  }
}

const MAX_HOPS = 32
const EXPECTED =
  'set the number of reverse proxies in front (e.g. 1) or their addresses as CIDRs (e.g. 10.0.0.0/8,fd00::/8)'

/**
 * Parses `TRUST_PROXY`. Throws TrustProxySettingError on `true` and on anything that is neither
 * a hop count nor a CIDR list.
 * @example parseTrustProxy('1') // { kind: 'hops', hops: 1 }
 */
export function parseTrustProxy(value: string | undefined): TrustProxy {
  const text = (value ?? '').trim()
  if (text === '' || text === '0' || text.toLowerCase() === 'false') return { kind: 'none' }
  if (text.toLowerCase() === 'true')
    throw new TrustProxySettingError(`"true" would believe any X-Forwarded-For a client writes; ${EXPECTED}`)
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    if (hops > MAX_HOPS) throw new TrustProxySettingError(`${hops} proxies is more than ${MAX_HOPS}; ${EXPECTED}`)
    return { kind: 'hops', hops }
  }
  const networks = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      // Four-part IPv4 only: ipaddr.js also reads `1.5` or `0x0a.1` as addresses, no operator means those.
      const cidr = canonicalAddress(part.split('/')[0]) === undefined ? null : normalizeCidr(part)
      if (!cidr) throw new TrustProxySettingError(`"${part.slice(0, 60)}" is not a CIDR; ${EXPECTED}`)
      return ipaddr.parseCIDR(cidr)
    })
  return { kind: 'networks', networks }
}

/** What a request says about its client once the policy is applied. */
export interface ForwardedView {
  /** The client's address in canonical form (IPv4-mapped IPv6 shown as IPv4); undefined without a socket address. */
  address: string | undefined
  /** `X-Forwarded-Proto` (`http` or `https`) when a trusted proxy passed one. */
  proto?: 'http' | 'https'
  /** `X-Forwarded-Host` as a trusted proxy passed it (unvalidated: see request-origin.ts). */
  host?: string
}

/**
 * Applies `policy` to the socket peer and the forwarded headers. Pure. A non-address entry is
 * never the client address: the socket peer stands in for it.
 * @example forwardedView({ kind: 'hops', hops: 1 }, '10.0.0.2', { 'x-forwarded-for': 'spoof, 203.0.113.7' }).address // '203.0.113.7'
 */
export function forwardedView(
  policy: TrustProxy,
  socketPeer: string | undefined,
  headers: IncomingHttpHeaders,
): ForwardedView {
  const peer = canonicalAddress(socketPeer)
  if (policy.kind === 'none' || peer === undefined) return { address: peer }
  const chain = listOf(headers['x-forwarded-for'])
  let hop: number
  let address: string | undefined
  if (policy.kind === 'hops') {
    if (policy.hops === 0) return { address: peer }
    // Fewer entries than proxies: the request skipped an outer proxy; the leftmost entry was
    // still written by a trusted one (Express does the same).
    hop = Math.min(policy.hops, chain.length)
    address = hop === 0 ? peer : canonicalAddress(chain[chain.length - hop])
  } else {
    if (!inNetworks(peer, policy.networks)) return { address: peer }
    hop = 0
    address = peer
    while (hop < chain.length) {
      hop++
      const entry = canonicalAddress(chain[chain.length - hop])
      address = entry
      if (entry === undefined || !inNetworks(entry, policy.networks)) break
    }
  }
  const view: ForwardedView = { address: address ?? peer }
  // A proxy that appends to X-Forwarded-Proto/-Host rather than replacing it: the value of the
  // same hop as the address. A single value (what most proxies send) is taken as it is.
  const proto = pickHop(listOf(headers['x-forwarded-proto']), hop)?.toLowerCase()
  if (proto === 'http' || proto === 'https') view.proto = proto
  const host = pickHop(listOf(headers['x-forwarded-host']), hop)
  if (host) view.host = host
  return view
}

function listOf(header: string | string[] | undefined): string[] {
  if (header === undefined) return []
  return (Array.isArray(header) ? header.join(',') : header).split(',').map((part) => part.trim())
}

function pickHop(values: string[], hop: number): string | undefined {
  if (values.length === 0) return undefined
  return values[values.length - Math.min(Math.max(hop, 1), values.length)]
}

function inNetworks(address: string, networks: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][]): boolean {
  const parsed = ipaddr.parse(address)
  return networks.some((range) => parsed.kind() === range[0].kind() && parsed.match(range))
}

/**
 * An address in canonical form, or undefined when the text is not one: `1.2.3.4`, `::1`,
 * `[::1]`, and the `1.2.3.4:port` / `[::1]:port` some proxies write. IPv4 in four decimal parts
 * only, and every spelling of one IPv6 address gives one text, so a client cannot pick a fresh
 * per-address limit by respelling its address.
 * @example canonicalAddress('::ffff:10.0.0.1') // '10.0.0.1'
 */
export function canonicalAddress(text: string | undefined): string | undefined {
  if (!text || text.length > 64) return undefined
  let bare = text.trim()
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(bare)
  if (bracketed) bare = bracketed[1]
  else if (/^[\d.]+:\d{1,5}$/.test(bare)) bare = bare.slice(0, bare.lastIndexOf(':'))
  const valid = bare.includes(':') ? ipaddr.IPv6.isValid(bare) : ipaddr.IPv4.isValidFourPartDecimal(bare)
  if (!valid) return undefined
  return ipaddr.process(bare).toString()
}
