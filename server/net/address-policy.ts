import ipaddr from 'ipaddr.js'

/**
 * Which addresses one kind of outbound traffic may contact. Pure data,
 * built from settings once; judged by `judgeAddress`.
 */
export interface AddressPolicy {
  /** Private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) are allowed by default. */
  allowPrivate: boolean
  /** Normalised CIDRs exempt from the default refusals. */
  allowedNetworks: readonly string[]
  /** Normalised CIDRs refused whatever else allows them: deny wins over allow. */
  deniedNetworks: readonly string[]
  /** The settings an operator changes, named in refusals. */
  settings: { allowed: string; denied?: string }
}

type AddressVerdict = { allowed: true } | { allowed: false; reason: string }

/** Outbound webhooks: public unicast only, `WEBHOOK_ALLOWED_NETWORKS` exempted. */
export function webhookAddressPolicy(settings: { allowedNetworks: readonly string[] }): AddressPolicy {
  return {
    allowPrivate: false,
    allowedNetworks: settings.allowedNetworks,
    deniedNetworks: [],
    settings: { allowed: 'WEBHOOK_ALLOWED_NETWORKS' },
  }
}

export interface UpstreamAddressSettings {
  allowedNetworks: readonly string[]
  deniedNetworks: readonly string[]
}

/** Registry upstreams: public and private ranges, the operator's allow and deny lists on top. */
export function upstreamAddressPolicy(settings: UpstreamAddressSettings): AddressPolicy {
  return {
    allowPrivate: true,
    allowedNetworks: settings.allowedNetworks,
    deniedNetworks: settings.deniedNetworks,
    settings: { allowed: 'UPSTREAM_ALLOWED_NETWORKS', denied: 'UPSTREAM_DENIED_NETWORKS' },
  }
}

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** What kind of address it is, for the policy and for messages. */
type Category = 'public' | 'private' | 'loopback' | 'linkLocal' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved'

const DESCRIPTIONS: Record<Exclude<Category, 'public'>, string> = {
  private: 'a private address',
  loopback: 'a loopback address',
  linkLocal: 'a link-local address (cloud metadata services live there)',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved or special-purpose address',
}

/**
 * Judges a literal IPv4/IPv6 address (brackets allowed). Embedded IPv4 (mapped, 6to4, Teredo,
 * NAT64, IPv4-compatible) is judged by the embedded address, so `::ffff:127.0.0.1` is loopback.
 * @example judgeAddress('169.254.169.254', upstreamAddressPolicy({ allowedNetworks: [], deniedNetworks: [] }))
 *   // { allowed: false, reason: '169.254.169.254 is a link-local address (...)' }
 */
export function judgeAddress(address: string, policy: AddressPolicy): AddressVerdict {
  const text = address.replace(/^\[|\]$/g, '')
  if (!ipaddr.isValid(text)) return { allowed: false, reason: `${text} is not an IP address` }
  const parsed = ipaddr.parse(text)
  const embedded = parsed.kind() === 'ipv6' ? embeddedIPv4(parsed as ipaddr.IPv6) : null
  const candidates: Address[] = embedded ? [parsed, embedded] : [parsed]
  const denied = matchingNetwork(candidates, policy.deniedNetworks)
  if (denied)
    return { allowed: false, reason: `${text} is in ${policy.settings.denied ?? 'a denied network'} (${denied})` }
  if (matchingNetwork(candidates, policy.allowedNetworks)) return { allowed: true }
  const category = categoryOf(embedded ?? parsed)
  if (category === 'public' || (category === 'private' && policy.allowPrivate)) return { allowed: true }
  const shown = embedded ? `${text} (${embedded.toString()})` : text
  return { allowed: false, reason: `${shown} is ${DESCRIPTIONS[category]}` }
}

/** `judgeAddress(...).allowed`. */
export function isAddressAllowed(address: string, policy: AddressPolicy): boolean {
  return judgeAddress(address, policy).allowed
}

/**
 * A CIDR in canonical form, or null when it is not one. A bare address is a single-host network
 * (what an operator will often write).
 * @example normalizeCidr('127.0.0.1') // '127.0.0.1/32'
 */
export function normalizeCidr(text: string): string | null {
  const trimmed = text.trim()
  const bare = !trimmed.includes('/')
  if (bare && !ipaddr.isValid(trimmed)) return null
  const withPrefix = bare ? `${trimmed}/${ipaddr.parse(trimmed).kind() === 'ipv6' ? 128 : 32}` : trimmed
  if (!ipaddr.isValidCIDR(withPrefix)) return null
  const [network, bits] = ipaddr.parseCIDR(withPrefix)
  return `${network.toString()}/${bits}`
}

/**
 * Parsed ranges by CIDR text. The texts come from settings (a handful, fixed per process), and every
 * outbound connection is judged: parsing them each time showed in delivery profiles.
 */
const parsedRanges = new Map<string, [Address, number]>()

function parsedRange(cidr: string): [Address, number] {
  let range = parsedRanges.get(cidr)
  if (!range) {
    range = ipaddr.parseCIDR(cidr)
    parsedRanges.set(cidr, range)
  }
  return range
}

/** The first network of `networks` any candidate lies in (v4 networks match v4 candidates only). */
function matchingNetwork(candidates: Address[], networks: readonly string[]): string | null {
  for (const cidr of networks) {
    const range = parsedRange(cidr)
    if (candidates.some((candidate) => candidate.kind() === range[0].kind() && candidate.match(range))) return cidr
  }
  return null
}

function categoryOf(address: Address): Category {
  const range = address.range()
  if (address.kind() === 'ipv4') {
    if (range === 'unicast') return 'public'
    if (range === 'private' || range === 'carrierGradeNat') return 'private'
    if (range === 'loopback' || range === 'linkLocal' || range === 'unspecified') return range
    if (range === 'multicast' || range === 'broadcast') return range
    return 'reserved'
  }
  if (range === 'uniqueLocal') return 'private'
  if (range === 'loopback' || range === 'linkLocal' || range === 'unspecified' || range === 'multicast') return range
  // Global unicast is 2000::/3 only; everything else ipaddr.js names is special-purpose or unassigned.
  if (range === 'unicast' && ((address as ipaddr.IPv6).parts[0] & 0xe000) === 0x2000) return 'public'
  return 'reserved'
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
