/** The `dist` object of a version manifest. */
export interface Dist {
  tarball?: string
  integrity?: string
  shasum?: string
  [key: string]: unknown
}

/** One version's manifest inside a packument (only fields the firewall reads are typed). */
export interface Manifest {
  name?: string
  version?: string
  dist?: Dist
  license?: unknown
  licenses?: unknown
  deprecated?: string | boolean
  scripts?: Record<string, unknown>
  hasInstallScript?: boolean
  [key: string]: unknown
}

/** Why a version was removed from a packument. */
export interface PolicyRestriction {
  rule?: string
  reason: string
}

/** An npm packument (full document of `GET /{name}`); unknown fields pass through untouched. */
export interface Packument {
  name: string
  'dist-tags'?: Record<string, string>
  versions?: Record<string, Manifest>
  time?: Record<string, string>
  /** Added by the firewall: versions hidden by `versions`-phase rules (npm ignores it). */
  policyRestrictions?: { versions: Record<string, PolicyRestriction> }
  [key: string]: unknown
}

/** The slice of a firewall decision the packument filter needs (a rules `Decision` fits). */
export interface VersionDecision {
  outcome: string
  rule?: { id: string }
  message: string
}
