/** A namespace's member as stored. */
export interface UserRecord {
  id: string
  createdAt: string
}

/** A namespace as stored. */
export interface NamespaceRecord {
  id: string
  owner: string
  createdAt: string
}
