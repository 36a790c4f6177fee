import { isIP } from 'node:net'
import type { LookupAddress } from 'node:dns'
import { isAddressAllowed, webhookAddressPolicy } from '../../net/address-policy'
import { guardedLookup as policyGuardedLookup, systemLookupAll, type LookupAll } from '../../net/guarded-lookup'
import type { WebhookSettings } from '../configuration/settings'

/** Why a webhook URL or address was refused; problems are data, never thrown. */
type UrlProblemCode = 'url_not_public' | 'url_scheme' | 'url_rejected_domain' | 'url_invalid'
type UrlCheck = { ok: true; url: URL } | { ok: false; code: UrlProblemCode; message: string }

type PolicySettings = Pick<WebhookSettings, 'allowedNetworks' | 'rejectedDomains'>

export type { LookupAll }

/**
 * True when `address` (a literal IPv4/IPv6) may be contacted: a public unicast address, or one
 * inside an operator-allowed network (judged by the shared address policy, server/net).
 */
export function isAllowedAddress(address: string, settings: PolicySettings): boolean {
  return isAddressAllowed(address, webhookAddressPolicy(settings))
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
    return {
      ok: false,
      code: 'url_scheme',
      message: `scheme must be http or https, not ${parsed.protocol.slice(0, -1)}`,
    }
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
export async function resolveAndCheck(
  url: string,
  settings: PolicySettings,
  lookupAll: LookupAll = systemLookupAll,
): Promise<UrlCheck> {
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
  return {
    ok: false,
    code: 'url_not_public',
    message: `${subject} is not a public address (an operator can exempt its network with WEBHOOK_ALLOWED_NETWORKS)`,
  }
}

/** Error code used when a lookup or connection is refused by the policy. */
export const NOT_PUBLIC_ERROR = 'ERR_WEBHOOK_NOT_PUBLIC'

/**
 * A `lookup` for the attempts' connections (attempt.ts) that refuses names resolving to
 * non-public addresses, so the address checked is the address connected to (defeats DNS
 * rebinding between check and use).
 */
export function guardedLookup(settings: PolicySettings, lookupAll: LookupAll = systemLookupAll) {
  return policyGuardedLookup(webhookAddressPolicy(settings), {
    errorCode: NOT_PUBLIC_ERROR,
    message: (hostname, reason) => `${hostname} resolves to an address that is not public: ${reason}`,
    lookupAll,
  })
}
