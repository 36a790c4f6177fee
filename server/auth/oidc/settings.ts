import ipaddr from 'ipaddr.js'
import { CLIENT_ID_PATTERN } from '../../common/ids'

/** OIDC_* (CONTRACT section 1): dashboard sign-in through an OpenID Connect provider. */
export interface OidcSettings {
  issuer: URL
  clientId: string
  clientSecret: string | null
  /** The claim that becomes the user id. */
  userClaim: string
  /** The claim whose values that equal a team id make the user a member of that team. */
  groupsClaim: string
  /** The namespace a signed-in user belongs to. */
  namespace: string
}

/** A wrong OIDC_* setting: the message names the variable; the service does not start. */
export class OidcSettingError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'OidcSettingError'
  }
}

/** Loopback hosts, where a local or test provider may speak plain http. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback'
}

/**
 * Reads the OIDC_* settings; null when OIDC_ISSUER is unset (token sign-in only).
 * @throws OidcSettingError on an issuer that is not an https URL (http on loopback only) or a missing client id
 */
export function parseOidcSettings(env: NodeJS.ProcessEnv): OidcSettings | null {
  const raw = env.OIDC_ISSUER?.trim()
  if (!raw) return null
  let issuer: URL
  try {
    issuer = new URL(raw)
  } catch {
    throw new OidcSettingError(`OIDC_ISSUER "${raw.slice(0, 200)}" is not a URL`)
  }
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && isLoopback(issuer.hostname)))
    throw new OidcSettingError(
      `OIDC_ISSUER must be an https:// URL (http:// only on a loopback address), got "${issuer.origin}"`,
    )
  const clientId = env.OIDC_CLIENT_ID?.trim()
  if (!clientId) throw new OidcSettingError('OIDC_CLIENT_ID is required when OIDC_ISSUER is set')
  const namespace = env.OIDC_NAMESPACE?.trim() || 'default'
  // A namespace no path can name would let every sign-in fail only after the provider's round trip.
  if (!CLIENT_ID_PATTERN.test(namespace))
    throw new OidcSettingError(
      `OIDC_NAMESPACE "${namespace.slice(0, 200)}" is not a namespace id (${CLIENT_ID_PATTERN.source})`,
    )
  return {
    issuer,
    clientId,
    clientSecret: env.OIDC_CLIENT_SECRET || null,
    userClaim: env.OIDC_USER_CLAIM?.trim() || 'preferred_username',
    groupsClaim: env.OIDC_GROUPS_CLAIM?.trim() || 'groups',
    namespace,
  }
}
