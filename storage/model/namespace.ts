/** A namespace's member as stored. */
export interface UserRecord {
  id: string
  createdAt: string
  /** How the user became known; records older than this field read as `admin`. */
  source?: UserSource
  /** Last sign-in through the provider (token use is read from the tokens' `lastUsedAt`). */
  lastSeenAt?: string | null
  /** The provider account (`iss` and `sub`) the id was bound to at its first provider sign-in. */
  subject?: string
}

export type UserSource = 'oidc' | 'admin' | 'bootstrap'

/** A namespace as stored. */
export interface NamespaceRecord {
  id: string
  owner: string
  createdAt: string
}
