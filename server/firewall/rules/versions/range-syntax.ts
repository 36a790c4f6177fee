import semver from 'semver'
import type { VersionOrdering } from './orderings'

/** How one ecosystem writes version ranges in `versionRange` and exception selectors. */
export interface RangeSyntax {
  /** Why a range text cannot be used, or null when it can. */
  problem(range: string): string | null
  /** Whether `version` is in `range`; invalid input never matches. */
  includes(version: string, range: string, includePrerelease: boolean): boolean
}

/** npm ranges are semver ranges. */
export const SEMVER_RANGES: RangeSyntax = {
  problem: (range) => (semver.validRange(range) === null ? `invalid semver range ${range}` : null),
  includes: (version, range, includePrerelease) =>
    semver.valid(version) !== null &&
    semver.validRange(range) !== null &&
    semver.satisfies(version, range, { includePrerelease }),
}

/**
 * For PyPI, Maven and NuGet a range is the comparator part of semver's syntax, compared with
 * the ecosystem's own ordering: sets joined by `||`, each set a space-separated list of
 * `<`, `<=`, `>`, `>=`, `=`/`==` or bare versions that must all hold, e.g. `>=1.0 <2.0 || ==3.1`.
 * Caret, tilde, x-ranges and hyphen ranges are semver notions and are refused, as are Maven
 * interval (`[1.0,2.0)`) and PEP 440 (`~=`, `!=`, commas) notations.
 */
type Op = '<' | '<=' | '>' | '>=' | '='
interface Comparator {
  op: Op
  version: string
}

const COMPARATOR = /^(<=|>=|<|>|==|=)?(.+)$/

/** The range taken apart, or a reason it is not a range for the ecosystem (`label` names it). */
function parseRange(label: string, ordering: VersionOrdering, range: string): Comparator[][] | { error: string } {
  const sets: Comparator[][] = []
  for (const text of range.split('||')) {
    const parts = text.trim().split(/\s+/).filter(Boolean)
    if (parts.length === 0) return { error: 'empty comparator set' }
    const set: Comparator[] = []
    for (const part of parts) {
      const m = COMPARATOR.exec(part)
      const version = m?.[2] ?? ''
      if (!m || /^[\^~*xX]|[,[\]()!]|^-$/.test(version) || /(^|\.)[xX*](\.|$)/.test(version)) {
        return { error: `"${part}" is not supported for ${label}: use <, <=, >, >=, = with ${label} versions` }
      }
      if (!ordering.valid(version)) return { error: `"${version}" is not a ${label} version` }
      set.push({ op: m[1] === '==' || !m[1] ? '=' : (m[1] as Op), version })
    }
    sets.push(set)
  }
  return sets
}

function holds(ordering: VersionOrdering, version: string, { op, version: bound }: Comparator): boolean {
  const c = ordering.compare(version, bound)
  return op === '=' ? c === 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0
}

/**
 * Comparator ranges under one ordering; `label` is the ecosystem name messages use.
 * @example comparatorRanges('pypi', PEP440_ORDERING).problem('^1.0') // '"^1.0" is not supported for pypi: ...'
 */
export function comparatorRanges(label: string, ordering: VersionOrdering): RangeSyntax {
  return {
    problem(range) {
      const parsed = parseRange(label, ordering, range)
      return 'error' in parsed ? parsed.error : null
    },
    includes(version, range, includePrerelease) {
      const sets = parseRange(label, ordering, range)
      if ('error' in sets || !ordering.valid(version)) return false
      if (!includePrerelease && ordering.prerelease(version)) return false
      return sets.some((set) => set.every((comparator) => holds(ordering, version, comparator)))
    },
  }
}
