/**
 * What storage reads of a firewall document: its id and version, and where its upstreams keep
 * credentials (sealed at rest, storage/secrets/). The rest of the document (rules, exceptions,
 * permissions) is the domain's (server/firewall/schema.ts, `Firewall`), which the repository
 * stores as it is given.
 */
export interface StoredFirewall {
  id: string
  version: number
  updatedAt: string
  upstreams: StoredUpstream[]
}

/** An upstream's credential fields: every string value of `credentials`, and each artifact host's token. */
export interface StoredUpstream {
  id: string
  credentials?: { [field: string]: string }
  artifactCredentials?: { host: string; credentials: { token: string } }[]
}

/** One immutable entry of a firewall's history: the full configuration at that version. */
export interface FirewallVersion<F extends StoredFirewall = StoredFirewall, A = unknown> {
  version: number
  updatedAt: string
  actor: A
  summary: string
  config: F
}
