import type { GrantablePermission } from '../namespace/schema'
import type { Actor } from '../events/schemas'

/** Who is calling: a user (personal token) or a service principal (service token). */
export interface Principal {
  type: 'user' | 'service'
  /** User id, or the service principal id of a service token. */
  id: string
  namespace: string
  tokenId: string
  /** Hash-derived, never token material. */
  tokenIdentifier: string
  /** Team ids (users only). */
  teams: string[]
  /** Namespace-level grants: the user's teams' permissions, or the service token's own list. */
  grants: GrantablePermission[]
  /** Namespace owner: holds `ns:admin`. */
  owner: boolean
  interaction?: string
}

/** Request metadata carried into events and audit entries. */
export interface RequestMeta {
  requestId: string
  remoteAddress?: string
  userAgent?: string
  method?: string
  path?: string
}

/** The actor object of docs/webhooks.md: every field omitted when empty. */
export function actorOf(principal: Principal | null, meta: RequestMeta): Actor {
  const actor: Actor = {}
  if (principal) {
    actor.userId = principal.id
    actor.tokenIdentifier = principal.tokenIdentifier
  }
  actor.requestId = meta.requestId
  if (meta.remoteAddress) actor.remoteAddress = meta.remoteAddress
  if (meta.userAgent) actor.userAgent = meta.userAgent
  return actor
}
