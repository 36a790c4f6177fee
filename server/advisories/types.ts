import type { Ecosystem, Severity } from '../firewall/schema'

/** One event of an OSV range, already narrowed to the kinds this service evaluates. */
export type RangeEvent = { introduced: string } | { fixed: string } | { last_affected: string } | { limit: string }

/** An OSV `affected[].ranges[]` entry of type SEMVER or ECOSYSTEM (GIT ranges are dropped). */
export interface AffectedRange {
  type: 'SEMVER' | 'ECOSYSTEM'
  events: readonly RangeEvent[]
}

/** The part of an OSV `affected[]` entry needed to decide whether a version is affected. */
export interface AffectedPackage {
  /** OSV ecosystem name: npm, PyPI, Maven, NuGet. */
  ecosystem: string
  name: string
  ranges: readonly AffectedRange[]
  versions: readonly string[]
}

/** A parsed OSV record: a vulnerability advisory or (id `MAL-...`) a malicious-package report. */
export interface Advisory {
  id: string
  aliases: readonly string[]
  summary?: string
  malware: boolean
  /** From `database_specific.severity`, else derived from the CVSS v3 base score. */
  severity?: Severity
  /** CVSS v3 base score computed from the record's vector, when it has one. */
  cvss?: number
  cvssVector?: string
  affected: AffectedPackage[]
}

/** What an index knows about one package version. */
export interface AdvisoryMatches {
  vulnerabilities: Advisory[]
  malware: Advisory[]
}

/** Read-only lookup of advisories by package version. */
export interface AdvisoryIndex {
  /** Number of distinct advisories held. */
  readonly size: number
  lookup(ecosystem: Ecosystem, name: string, version: string): AdvisoryMatches
  /** Every advisory held, for merging indexes. */
  all(): Iterable<Advisory>
  /** How many advisories name a package of `ecosystem` (for status figures). */
  count?(ecosystem: Ecosystem): number
}
