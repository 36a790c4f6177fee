import semver from 'semver'
import type { AffectedPackage, AffectedRange } from './types'

type Compare = (a: string, b: string) => number | null

function compareSemver(a: string, b: string): number | null {
  const left = semver.valid(a)
  const right = semver.valid(b)
  return left && right ? semver.compare(left, right) : null
}

const TOKEN = /\d+|[a-z]+/g
// Qualifiers that come after the plain release rather than before it (PEP 440 post, Maven sp).
const AFTER_RELEASE = new Set(['post', 'sp', 'final', 'ga', 'release'])

/**
 * Approximate ordering for PyPI, Maven and NuGet versions: digit runs compare numerically, a
 * trailing letter qualifier (rc, beta, alpha...) sorts before the plain release. OSV records of
 * those ecosystems usually enumerate `versions` too, which are matched exactly before this runs.
 */
function compareGeneric(a: string, b: string): number | null {
  const left = a.toLowerCase().match(TOKEN)
  const right = b.toLowerCase().match(TOKEN)
  if (!left || !right) return null
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const x = left[i]
    const y = right[i]
    if (x === y) continue
    if (x === undefined) return /^\d/.test(y!) || AFTER_RELEASE.has(y!) ? -1 : 1
    if (y === undefined) return /^\d/.test(x) || AFTER_RELEASE.has(x) ? 1 : -1
    const xNum = /^\d/.test(x)
    const yNum = /^\d/.test(y)
    if (xNum && yNum) {
      // '01' and '1' are the same number; keep comparing the following tokens.
      if (Number(x) === Number(y)) continue
      return Number(x) < Number(y) ? -1 : 1
    }
    if (xNum !== yNum) return xNum ? 1 : -1
    return x < y ? -1 : 1
  }
  return 0
}

function eventVersion(event: AffectedRange['events'][number]): string {
  return Object.values(event)[0] as string
}

/**
 * OSV's evaluation (osv-schema "Evaluation"): walk the events sorted by version; the last
 * event at or below the version decides. `introduced: "0"` means "from the first version".
 */
function inRange(range: AffectedRange, version: string, compare: Compare): boolean {
  const events = range.events.filter((event) => {
    const at = eventVersion(event)
    return ('introduced' in event && at === '0') || compare(at, at) !== null
  })
  const sorted = [...events].sort((x, y) => {
    if ('introduced' in x && x.introduced === '0') return -1
    if ('introduced' in y && y.introduced === '0') return 1
    return compare(eventVersion(x), eventVersion(y)) ?? 0
  })
  let affected = false
  for (const event of sorted) {
    if ('introduced' in event) {
      if (event.introduced === '0' || (compare(version, event.introduced) ?? -1) >= 0) affected = true
    } else if ('fixed' in event) {
      if ((compare(version, event.fixed) ?? -1) >= 0) affected = false
    } else if ('last_affected' in event) {
      if ((compare(version, event.last_affected) ?? -1) > 0) affected = false
    } else if ((compare(version, event.limit) ?? -1) >= 0) {
      affected = false
    }
  }
  return affected
}

/**
 * Whether one OSV `affected` entry covers `version`: listed explicitly, or inside one of its
 * ranges (npm ranges compare as semver; a version that does not parse is never in a range).
 */
export function isVersionAffected(affected: AffectedPackage, version: string): boolean {
  if (affected.versions.includes(version)) return true
  const npm = affected.ecosystem === 'npm'
  for (const range of affected.ranges) {
    const compare = range.type === 'SEMVER' || npm ? compareSemver : compareGeneric
    if (compare(version, version) === null) continue
    if (inRange(range, version, compare)) return true
  }
  return false
}
