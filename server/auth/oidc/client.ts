import * as oidc from 'openid-client'
import { logger } from '../../app/logger'
import { DomainError } from '../../common/errors'
import { OidcSettingError, type OidcSettings } from './settings'

/** What a sign-in keeps between the redirect to the provider and the callback (a short-lived cookie). */
export interface OidcTransaction {
  state: string
  nonce: string
  codeVerifier: string
  /** The redirect URI sent to the provider; the token request must repeat it. */
  redirectUri: string
}

/** Who the provider says signed in, read from the configured claims. */
export interface OidcIdentity {
  /** The OIDC_USER_CLAIM value (not yet checked against the id pattern). */
  userId: unknown
  /** The OIDC_GROUPS_CLAIM values that are strings; null when the claim is absent (memberships stay). */
  groups: string[] | null
  /** The provider account: issuer and `sub`, which the user id is bound to. */
  subject: string
}

/** A callback the provider or the checks refused (wrong state, nonce, issuer, an expired code...). */
export class OidcRefusal extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'OidcRefusal'
  }
}

const DISCOVERY_TIMEOUT_SECONDS = 10
/** While the provider is unreachable, discovery is tried again after these delays (the last repeats). */
const REDISCOVERY_DELAYS_MS = [2_000, 5_000, 15_000, 30_000, 60_000]
/**
 * A sign-in tries discovery only when the last try began at least this long ago: anyone may
 * click, and a provider that refuses at once would otherwise get one request per click.
 */
const SIGN_IN_REDISCOVERY_GAP_MS = 1_000

/**
 * Whether a failed discovery is the provider's outage rather than a wrong setting: no answer at
 * all (refused, unresolvable, timed out), or a 5xx or 429. Any other answer (a 404, a document
 * that is not a provider's, another issuer) is a wrong OIDC_ISSUER.
 */
export function isOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  // fetch's own failure (refused, unresolvable) is a TypeError without a code; openid-client's
  // argument checks are TypeErrors with one (ERR_INVALID_ARG_*), which are no outage.
  if (error instanceof TypeError) return (error as { code?: unknown }).code === undefined
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return true
  const status = error.cause instanceof Response ? error.cause.status : undefined
  return status !== undefined && (status >= 500 || status === 429)
}

function reasonOf(error: unknown): string {
  const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : ''
  const status = error instanceof Error && error.cause instanceof Response ? ` (HTTP ${error.cause.status})` : ''
  return `${reason || String(error)}${status}`
}

/**
 * The relying party: the provider's metadata is discovered at start. A wrong issuer stops the
 * start; an unreachable provider does not (the firewalls, the API and token sign-in do not need
 * it): discovery is tried again in the background and at each sign-in until it succeeds, and a
 * sign-in meanwhile is refused with the reason. Each sign-in is an authorization code grant with
 * PKCE (S256), state and nonce, all checked by openid-client.
 */
export class OidcClient {
  private config: oidc.Configuration | null = null
  /** Why the provider was last found unreachable ('' while reached), for the log. */
  private outage = ''
  private discovering: Promise<void> | null = null
  private retry: NodeJS.Timeout | null = null
  private retries = 0
  private closed = false
  /** When the last discovery began (`performance.now()`). */
  private lastTryAt = Number.NEGATIVE_INFINITY

  private constructor(readonly settings: OidcSettings) {}

  /**
   * @throws OidcSettingError naming OIDC_ISSUER when the provider answered and the answer is not a
   * provider's discovery document for this issuer
   */
  static async discover(settings: OidcSettings): Promise<OidcClient> {
    const client = new OidcClient(settings)
    await client.tryDiscovery()
    return client
  }

  /** Stops trying discovery again (the service is closing). */
  close(): void {
    this.closed = true
    if (this.retry) clearTimeout(this.retry)
  }

  /** One discovery at a time; an outage schedules the next try, any other failure throws. */
  private tryDiscovery(): Promise<void> {
    this.discovering ??= this.discoverOnce().finally(() => (this.discovering = null))
    return this.discovering
  }

  private async discoverOnce(): Promise<void> {
    const { settings } = this
    const auth = settings.clientSecret ? oidc.ClientSecretPost(settings.clientSecret) : oidc.None()
    // http is accepted only on loopback, which settings.ts has checked already.
    const execute = settings.issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : []
    this.lastTryAt = performance.now()
    try {
      this.config = await oidc.discovery(settings.issuer, settings.clientId, undefined, auth, {
        execute,
        timeout: DISCOVERY_TIMEOUT_SECONDS,
      })
      if (this.retry) clearTimeout(this.retry)
      this.retry = null
      if (this.outage)
        logger.info('OIDC provider reached: sign-in through it works again', { issuer: settings.issuer.href })
      this.outage = ''
    } catch (error) {
      const message = `OIDC_ISSUER: discovery of "${settings.issuer.href}" failed (${reasonOf(error)})`
      if (!isOutage(error)) throw new OidcSettingError(`${message}; check the issuer URL`)
      if (!this.outage)
        logger.error(`${message}; the service runs without sign-in through the provider and tries again`, {
          issuer: settings.issuer.href,
        })
      this.outage = message
      this.scheduleRetry()
    }
  }

  private scheduleRetry(): void {
    if (this.closed || this.retry) return
    const delay = REDISCOVERY_DELAYS_MS[Math.min(this.retries++, REDISCOVERY_DELAYS_MS.length - 1)]
    this.retry = setTimeout(() => {
      this.retry = null
      // A wrong answer later (the issuer now serves another document) keeps sign-in refused.
      this.tryDiscovery().catch((error: unknown) => {
        this.outage = error instanceof Error ? error.message : String(error)
        logger.error('OIDC provider discovery failed', { error: this.outage })
      })
    }, delay)
    this.retry.unref()
  }

  /**
   * The discovered configuration; while the provider is unreachable, tries discovery once more
   * first (joins one running, or starts one if the last began SIGN_IN_REDISCOVERY_GAP_MS ago).
   */
  private async configuration(): Promise<oidc.Configuration> {
    const due = this.discovering !== null || performance.now() - this.lastTryAt >= SIGN_IN_REDISCOVERY_GAP_MS
    if (!this.config && due) await this.tryDiscovery().catch(() => undefined)
    // The cause (addresses, the issuer's reply) is in the log, not on a page anyone may open.
    if (!this.config)
      throw new DomainError(
        'unavailable',
        'oidc_unavailable',
        'the identity provider cannot be reached now; sign in with a token, or try again later',
      )
    return this.config
  }

  /** The provider's name for the sign-in button: its host. */
  get displayName(): string {
    return this.settings.issuer.host
  }

  /** Starts a sign-in: the provider's authorization URL and the checks the callback needs. */
  async begin(redirectUri: string): Promise<{ url: URL; transaction: OidcTransaction }> {
    const transaction: OidcTransaction = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      redirectUri,
    }
    const config = await this.configuration()
    const scopes = ['openid', 'profile', 'email', 'groups']
    const supported = config.serverMetadata().scopes_supported
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: (supported ? scopes.filter((s) => s === 'openid' || supported.includes(s)) : ['openid', 'profile']).join(
        ' ',
      ),
      code_challenge: await oidc.calculatePKCECodeChallenge(transaction.codeVerifier),
      code_challenge_method: 'S256',
      state: transaction.state,
      nonce: transaction.nonce,
    })
    return { url, transaction }
  }

  /**
   * Completes a sign-in from the callback's query: checks state, issuer, code (with the PKCE
   * verifier) and the ID token's nonce, then reads the configured claims (from the ID token, else
   * from the userinfo endpoint).
   * @throws OidcRefusal on any failed check or an error the provider answered
   */
  async complete(search: string, transaction: OidcTransaction): Promise<OidcIdentity> {
    const currentUrl = new URL(transaction.redirectUri)
    currentUrl.search = search
    const config = await this.configuration()
    let claims: Record<string, unknown>
    try {
      const tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: transaction.codeVerifier,
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
        idTokenExpected: true,
      })
      claims = { ...tokens.claims() }
      const { userClaim, groupsClaim } = this.settings
      if ((claims[userClaim] === undefined || claims[groupsClaim] === undefined) && tokens.access_token) {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, String(claims.sub))
        claims = { ...info, ...claims }
      }
    } catch (error) {
      throw new OidcRefusal(describe(error))
    }
    const groups = claims[this.settings.groupsClaim]
    return {
      userId: claims[this.settings.userClaim],
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : null,
      subject: `${config.serverMetadata().issuer} ${String(claims.sub)}`,
    }
  }
}

/** The refusal's reason as the provider or the check put it (never a token or a code). */
function describe(error: unknown): string {
  if (error instanceof oidc.AuthorizationResponseError || error instanceof oidc.ResponseBodyError)
    return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`
  // openid-client wraps the failed check (oauth4webapi's) in a generic "invalid response" error.
  if (error instanceof Error && error.cause instanceof Error) return error.cause.message
  return error instanceof Error ? error.message : String(error)
}
