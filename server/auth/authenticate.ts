import type { AuthPorts } from './ports'
import { DomainError } from '../common/errors'
import type { NamespaceRecord, Team } from '../namespace/schema'
import { collectionItems } from '../../storage/repositories/collection'
import type { TokenLookup } from '../../storage/repositories/tokens'
import type { Principal } from './principal'
import { hashToken, isPlausibleToken, splitInteraction, tokenIdentifier } from './tokens'
import { TouchGate } from './touch-gate'

const unauthenticated = (message: string) => new DomainError('unauthenticated', 'unauthenticated', message)

/** Minimum gap between two last-used writes of one token (keeps reads cheap). */
const TOUCH_INTERVAL_MS = 60_000
const lastTouched = new TouchGate(TOUCH_INTERVAL_MS)

/**
 * Token material from an Authorization header: `Bearer <token>`, or Basic auth whose
 * password is the token (how pip, Maven and NuGet clients send it).
 */
export function credentialFromHeader(header: string | undefined): string | null {
  if (!header) return null
  const [scheme, value] = header.trim().split(/\s+/, 2)
  if (!value) return null
  if (/^bearer$/i.test(scheme)) return value
  if (/^basic$/i.test(scheme)) {
    const decoded = Buffer.from(value, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    return colon >= 0 ? decoded.slice(colon + 1) : null
  }
  return null
}

/**
 * Resolves a presented token to the principal acting in `ns`. Every failure is a 401 with
 * the same shape; the message says which kind of failure, never echoing the token.
 */
export async function authenticate(services: AuthPorts, presented: string | null, ns: string): Promise<Principal> {
  if (!presented) throw unauthenticated('missing bearer token')
  const { material, interaction } = splitInteraction(presented)
  if (!isPlausibleToken(material)) throw unauthenticated('malformed token')
  const hash = hashToken(material)
  const lookup = await services.tokens.findForNamespace(hash, ns)
  const { token, namespace } = lookup
  if (!token) throw unauthenticated('unknown token')
  if (token.revokedAt) throw unauthenticated('token revoked')
  const now = services.clock.now()
  if (token.expiresAt && Date.parse(token.expiresAt) <= now) throw unauthenticated('token expired')
  if (token.namespace !== ns || !namespace) throw unauthenticated('token not valid for this namespace')
  if (lastTouched.due(token.id, now)) {
    // Awaited (once a minute per token and process): a token list right after a use must show it.
    // A failed write costs the timestamp, never the request.
    await services.tokens.touch(token, new Date(now).toISOString()).catch(() => undefined)
  }
  const principal: Principal = {
    type: token.kind === 'service' ? 'service' : 'user',
    id: token.principalId,
    namespace: ns,
    tokenId: token.id,
    tokenIdentifier: tokenIdentifier(hash),
    teams: [],
    grants: [],
    owner: false,
  }
  if (interaction) principal.interaction = interaction
  if (token.kind === 'service') {
    principal.grants = (token.permissions ?? []) as Principal['grants']
    return principal
  }
  const access = userAccess(lookup, token.principalId)
  principal.teams = [...access.teams]
  principal.grants = [...access.grants]
  principal.owner = access.owner
  return principal
}

type UserAccess = Pick<Principal, 'teams' | 'grants' | 'owner'>

/**
 * What a lookup grants its user, worked out once per lookup: the repository hands out the same
 * lookup while it reuses it (#27), so a call does not rebuild the teams map each time.
 */
const accessOfLookup = new WeakMap<TokenLookup, UserAccess>()

function userAccess(lookup: TokenLookup, userId: string): UserAccess {
  let access = accessOfLookup.get(lookup)
  if (access) return access
  // Read through a Map (team ids may be `valueOf`), and a malformed stored team is skipped: one bad
  // document must not refuse every call of the namespace.
  const teams = [...collectionItems<Team>(lookup.teams).values()].filter(
    (team) => Array.isArray(team?.members) && team.members.some((member) => member?.userId === userId),
  )
  access = {
    teams: teams.map((team) => team.id),
    grants: [...new Set(teams.flatMap((team) => team.permissions))],
    owner: (lookup.namespace as NamespaceRecord).owner === userId,
  }
  accessOfLookup.set(lookup, access)
  return access
}

/**
 * The namespace a presented token belongs to, or null when it is not a live token. Lets the
 * dashboard sign a user in without asking which namespace the token is for.
 */
export async function namespaceOfToken(services: AuthPorts, presented: string): Promise<string | null> {
  const { material } = splitInteraction(presented)
  if (!isPlausibleToken(material)) return null
  const token = await services.tokens.findByHash(hashToken(material))
  return token && !token.revokedAt ? token.namespace : null
}
