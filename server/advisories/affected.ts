import semver from 'semver'
import type { Ecosystem } from '../firewall/schema'
import { sameVersion, versionOrdering } from '../firewall/rules/versions/ordering'
import { fromOsvEcosystem } from './ecosystems'
import type { AffectedPackage, AffectedRange, RangeEvent } from './types'

/** The part of an ordering range evaluation needs. */
interface Ordering {
  valid(version: string): boolean
  compare(a: string, b: string): number
}

// OSV SEMVER ranges are SemVer 2.0 whatever the ecosystem; ECOSYSTEM ranges use the
// ecosystem's own ordering, the same comparators the firewall's versionRange rules use.
const SEMVER: Ordering = { valid: (v) => semver.valid(v) !== null, compare: (a, b) => semver.compare(a, b) }

function orderingOf(type: AffectedRange['type'], ecosystem: Ecosystem | undefined): Ordering | undefined {
  if (type === 'SEMVER') return SEMVER
  return ecosystem ? versionOrdering(ecosystem) : undefined
}

function valueOf(event: RangeEvent): string {
  if ('introduced' in event) return event.introduced
  if ('fixed' in event) return event.fixed
  return 'last_affected' in event ? event.last_affected : event.limit
}

/** `introduced: "0"` is below every version in every ecosystem (osv-schema "Evaluation"). */
function comparator(ordering: Ordering): (a: string, b: string) => number {
  return (a, b) => (a === '0' || b === '0' ? (a === b ? 0 : a === '0' ? -1 : 1) : ordering.compare(a, b))
}

/**
 * OSV's `IncludedInRanges` for one range: `version` must be below some `limit` (when there are
 * any), then the events sorted by version decide (the last one at or below the version wins).
 * Events whose version the ordering cannot read are left out rather than misplaced.
 */
function inRange(range: AffectedRange, version: string, ordering: Ordering): boolean {
  const compare = comparator(ordering)
  const usable = range.events.filter((event) => {
    const at = valueOf(event)
    return at === '0' || (at !== '*' && ordering.valid(at))
  })
  const limits = usable.filter((event): event is { limit: string } => 'limit' in event)
  if (limits.length > 0 && !limits.some((event) => compare(version, event.limit) < 0)) return false
  const sorted = usable.filter((event) => !('limit' in event)).sort((x, y) => compare(valueOf(x), valueOf(y)))
  let vulnerable = false
  for (const event of sorted) {
    if ('introduced' in event) {
      if (compare(version, event.introduced) >= 0) vulnerable = true
    } else if ('fixed' in event) {
      if (compare(version, event.fixed) >= 0) vulnerable = false
    } else if ('last_affected' in event && compare(version, event.last_affected) > 0) {
      vulnerable = false
    }
  }
  return vulnerable
}

/**
 * Whether one OSV `affected` entry covers `version`: listed in `versions` (the same version in
 * the ecosystem's terms, e.g. `1.0` = `1.0.0` on PyPI), or inside one of its ranges, compared
 * with the ecosystem's ordering (SEMVER ranges with semver). A version the ordering cannot read
 * is never inside a range.
 * @example isVersionAffected({ ecosystem: 'PyPI', name: 'django', versions: [], ranges: [...] }, '4.2rc1')
 */
export function isVersionAffected(affected: AffectedPackage, version: string): boolean {
  const ecosystem = fromOsvEcosystem(affected.ecosystem)
  if (affected.versions.includes(version)) return true
  if (ecosystem && affected.versions.some((listed) => sameVersion(ecosystem, listed, version))) return true
  for (const range of affected.ranges) {
    const ordering = orderingOf(range.type, ecosystem)
    if (!ordering || !ordering.valid(version)) continue
    if (inRange(range, version, ordering)) return true
  }
  return false
}
