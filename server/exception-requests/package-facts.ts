import type { PackageVersionFacts } from '../firewall/rules/types'
import { INSTALL_SCRIPTS } from '../firewall/rules/selectors'
import type { AdvisoryMatches } from '../advisories/types'
import type { Severity } from '../firewall/schema'

/**
 * The facts a reviewer decides an exception request on, assembled from what the firewall
 * knows (its log, the other requests, advisory data) and what the upstream says about the
 * package. Pure: every input is handed in, the clock included, so it is tested without I/O.
 */

/** One version as the upstream described it: the rule facts, and outside npm a plain word on install-time code. */
export interface UpstreamVersion extends PackageVersionFacts {
  /** What installing it runs, where the ecosystem has no npm-style scripts (PyPI: wheel or source only). */
  installNote?: string
}

/**
 * Facts this ecosystem's upstream does not give (or gives for the requested version only), each
 * with the sentence the panel shows instead of a misleading "none".
 */
export interface FactNotes {
  published?: string
  license?: string
  installScripts?: string
}

/** What the upstream said (registry/package-versions.ts), restated so this module stays pure. */
export type UpstreamAnswer =
  | { kind: 'found'; upstream: string; versions: UpstreamVersion[]; latest?: string; notes?: FactNotes }
  | { kind: 'not_found' }
  | { kind: 'unreachable'; reason: string }

/** One advisory as the panel shows it. */
export interface AdvisoryFact {
  id: string
  kind: 'malware' | 'vulnerability'
  severity?: Severity
  summary?: string
}

/** One version as the panel shows it. */
export interface VersionFact {
  version: string
  published?: string
  /** "3 days", "2 years": how long ago it was published. */
  age?: string
  license?: string
  /** The install-time scripts it declares (`preinstall`, `install`, `postinstall`), or `hasInstallScript`. */
  installScripts: string[]
  /** Outside npm: what installing it runs, in plain words. */
  installNote?: string
  deprecated?: string
  /** Undefined when advisory data could not be read for it. */
  advisories?: AdvisoryFact[]
  /** The version the request names. */
  requested: boolean
  latest: boolean
}

/** A block of the package in the log window. */
export interface BlockFact {
  user: string
  version: string
  rule?: string
  time: string
}

/** Another pending request for the same package. */
export interface PendingFact {
  id: string
  requestedBy: string
  version?: string
  rule: string
  requestedAt: string
}

export interface PackageFactsInput {
  packageName: string
  /** The version the request names (undefined: every version). */
  version?: string
  now: number
  upstream: UpstreamAnswer
  /** Advisory data of one version; throws when the data is not loaded. */
  advisoriesOf(version: string): AdvisoryMatches
  /** Blocks of the package within the window, any order. */
  blocks: readonly BlockFact[]
  windowDays: number
  otherPending: readonly PendingFact[]
  /** Versions listed at most (newest first); the requested one is always among them. */
  maxVersions?: number
}

export interface PackageFacts {
  packageName: string
  upstream:
    | { state: 'found'; upstream: string; notes?: FactNotes }
    | { state: 'not_found' }
    | { state: 'unreachable'; reason: string }
  /**
   * Newest first, at most `maxVersions`: by publish time when every version has one, else in
   * the upstream's order reversed (registries list oldest first; a few dated versions among
   * undated ones, as Maven's requested one, must not jump ahead of newer ones).
   */
  versions: VersionFact[]
  totalVersions: number
  /** The requested version, when the upstream has it. */
  requested?: VersionFact
  blocks: { windowDays: number; total: number; byUser: { user: string; count: number; last: string }[] }
  otherPending: PendingFact[]
}

const UNITS: [number, string][] = [
  [365 * 24 * 3600_000, 'year'],
  [30 * 24 * 3600_000, 'month'],
  [7 * 24 * 3600_000, 'week'],
  [24 * 3600_000, 'day'],
  [3600_000, 'hour'],
  [60_000, 'minute'],
]

/**
 * How long ago `iso` was, in the largest whole unit: "3 days", "1 year", "less than a minute".
 * @example ageOf('2026-01-01T00:00:00Z', Date.parse('2026-01-04T12:00:00Z')) // '3 days'
 */
export function ageOf(iso: string, now: number): string | undefined {
  const at = Date.parse(iso)
  if (Number.isNaN(at)) return undefined
  const elapsed = now - at
  if (elapsed < 0) return 'in the future'
  for (const [size, unit] of UNITS) {
    const count = Math.floor(elapsed / size)
    if (count >= 1) return `${count} ${unit}${count === 1 ? '' : 's'}`
  }
  return 'less than a minute'
}

function advisoriesOf(input: PackageFactsInput, version: string): AdvisoryFact[] | undefined {
  let matches: AdvisoryMatches
  try {
    matches = input.advisoriesOf(version)
  } catch {
    return undefined
  }
  const fact = (kind: AdvisoryFact['kind']) => (a: AdvisoryMatches['malware'][number]) => ({
    id: a.id,
    kind,
    ...(a.severity ? { severity: a.severity } : {}),
    ...(a.summary ? { summary: a.summary } : {}),
  })
  return [...matches.malware.map(fact('malware')), ...matches.vulnerabilities.map(fact('vulnerability'))]
}

function versionFact(input: PackageFactsInput, facts: UpstreamVersion, latest?: string): VersionFact {
  const scripts = INSTALL_SCRIPTS.filter((name) => (facts.scripts?.[name] ?? '').trim() !== '')
  const installScripts: string[] = scripts.length ? [...scripts] : facts.hasInstallScript ? ['hasInstallScript'] : []
  const deprecated = typeof facts.deprecated === 'string' && facts.deprecated ? facts.deprecated : undefined
  return {
    version: facts.version,
    ...(facts.published ? { published: facts.published, age: ageOf(facts.published, input.now) } : {}),
    ...(facts.license ? { license: facts.license } : {}),
    installScripts,
    ...(facts.installNote ? { installNote: facts.installNote } : {}),
    ...(deprecated ? { deprecated } : facts.deprecated === true ? { deprecated: 'deprecated' } : {}),
    advisories: advisoriesOf(input, facts.version),
    requested: facts.version === input.version,
    latest: facts.version === latest,
  }
}

const publishedAt = (facts: PackageVersionFacts) => {
  const at = facts.published ? Date.parse(facts.published) : NaN
  return Number.isNaN(at) ? -Infinity : at
}

/**
 * The panel's facts.
 * @example assemblePackageFacts({ packageName: 'chalk', version: '5.3.0', now: Date.now(), upstream, advisoriesOf, blocks: [], windowDays: 30, otherPending: [] })
 */
export function assemblePackageFacts(input: PackageFactsInput): PackageFacts {
  const max = input.maxVersions ?? 15
  const { upstream } = input
  let versions: VersionFact[] = []
  let requested: VersionFact | undefined
  let totalVersions = 0
  if (upstream.kind === 'found') {
    const allDated = upstream.versions.every((facts) => publishedAt(facts) !== -Infinity)
    const ordered = upstream.versions
      .map((facts, index) => ({ facts, index }))
      .sort((a, b) => (allDated ? publishedAt(b.facts) - publishedAt(a.facts) || b.index - a.index : b.index - a.index))
      .map(({ facts }) => facts)
    totalVersions = ordered.length
    const shown = ordered.slice(0, max)
    const wanted = input.version ? ordered.find((facts) => facts.version === input.version) : undefined
    if (wanted && !shown.includes(wanted)) shown.push(wanted)
    versions = shown.map((facts) => versionFact(input, facts, upstream.latest))
    requested = versions.find((v) => v.requested)
  }
  const byUser = new Map<string, { count: number; last: string }>()
  for (const block of input.blocks) {
    const seen = byUser.get(block.user)
    if (!seen) byUser.set(block.user, { count: 1, last: block.time })
    else {
      seen.count++
      if (block.time > seen.last) seen.last = block.time
    }
  }
  return {
    packageName: input.packageName,
    upstream:
      upstream.kind === 'found'
        ? { state: 'found', upstream: upstream.upstream, ...(upstream.notes ? { notes: upstream.notes } : {}) }
        : upstream.kind === 'unreachable'
          ? { state: 'unreachable', reason: upstream.reason }
          : { state: 'not_found' },
    versions,
    totalVersions,
    ...(requested ? { requested } : {}),
    blocks: {
      windowDays: input.windowDays,
      total: input.blocks.length,
      byUser: [...byUser]
        .map(([user, { count, last }]) => ({ user, count, last }))
        .sort((a, b) => b.count - a.count || a.user.localeCompare(b.user)),
    },
    otherPending: [...input.otherPending].sort((a, b) => a.requestedAt.localeCompare(b.requestedAt)),
  }
}
