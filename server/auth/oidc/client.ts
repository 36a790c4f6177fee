import * as oidc from 'openid-client'
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

/**
 * The relying party: the provider's metadata is discovered once at start (a wrong issuer stops
 * the start); each sign-in is an authorization code grant with PKCE (S256), state and nonce,
 * all checked by openid-client.
 */
export class OidcClient {
  private constructor(
    readonly settings: OidcSettings,
    private readonly config: oidc.Configuration,
  ) {}

  /** @throws OidcSettingError naming OIDC_ISSUER when discovery fails or the issuer does not match */
  static async discover(settings: OidcSettings): Promise<OidcClient> {
    const auth = settings.clientSecret ? oidc.ClientSecretPost(settings.clientSecret) : oidc.None()
    // http is accepted only on loopback, which settings.ts has checked already.
    const execute = settings.issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : []
    try {
      const config = await oidc.discovery(settings.issuer, settings.clientId, undefined, auth, {
        execute,
        timeout: DISCOVERY_TIMEOUT_SECONDS,
      })
      return new OidcClient(settings, config)
    } catch (error) {
      const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : ''
      throw new OidcSettingError(
        `OIDC_ISSUER: discovery of "${settings.issuer.href}" failed (${reason || String(error)}); check the issuer URL`,
      )
    }
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
    const scopes = ['openid', 'profile', 'email', 'groups']
    const supported = this.config.serverMetadata().scopes_supported
    const url = oidc.buildAuthorizationUrl(this.config, {
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
    let claims: Record<string, unknown>
    try {
      const tokens = await oidc.authorizationCodeGrant(this.config, currentUrl, {
        pkceCodeVerifier: transaction.codeVerifier,
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
        idTokenExpected: true,
      })
      claims = { ...tokens.claims() }
      const { userClaim, groupsClaim } = this.settings
      if ((claims[userClaim] === undefined || claims[groupsClaim] === undefined) && tokens.access_token) {
        const info = await oidc.fetchUserInfo(this.config, tokens.access_token, String(claims.sub))
        claims = { ...info, ...claims }
      }
    } catch (error) {
      throw new OidcRefusal(describe(error))
    }
    const groups = claims[this.settings.groupsClaim]
    return {
      userId: claims[this.settings.userClaim],
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : null,
      subject: `${this.config.serverMetadata().issuer} ${String(claims.sub)}`,
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
