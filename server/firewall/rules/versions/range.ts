import semver from 'semver'
import type { Ecosystem } from '../../schema'
import { versionOrdering } from './ordering'

/**
 * Version ranges of `versionRange` selectors and exception selectors. npm ranges are semver
 * ranges. For PyPI, Maven and NuGet a range is the comparator part of that syntax, compared
 * with the ecosystem's own ordering: sets joined by `||`, each set a space-separated list of
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

/** The range taken apart, or a reason it is not a range for the ecosystem. */
export function parseRange(ecosystem: Exclude<Ecosystem, 'npm'>, range: string): Comparator[][] | { error: string } {
  const ordering = versionOrdering(ecosystem)
  const sets: Comparator[][] = []
  for (const text of range.split('||')) {
    const parts = text.trim().split(/\s+/).filter(Boolean)
    if (parts.length === 0) return { error: 'empty comparator set' }
    const set: Comparator[] = []
    for (const part of parts) {
      const m = COMPARATOR.exec(part)
      const version = m?.[2] ?? ''
      if (!m || /^[\^~*xX]|[,[\]()!]|^-$/.test(version) || /(^|\.)[xX*](\.|$)/.test(version)) {
        return { error: `"${part}" is not supported for ${ecosystem}: use <, <=, >, >=, = with ${ecosystem} versions` }
      }
      if (!ordering.valid(version)) return { error: `"${version}" is not a ${ecosystem} version` }
      set.push({ op: m[1] === '==' || !m[1] ? '=' : (m[1] as Op), version })
    }
    sets.push(set)
  }
  return sets
}

function holds(ecosystem: Exclude<Ecosystem, 'npm'>, version: string, { op, version: bound }: Comparator): boolean {
  const c = versionOrdering(ecosystem).compare(version, bound)
  return op === '=' ? c === 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0
}

/**
 * Why a range text cannot be used for the ecosystem, or null when it can.
 * @example rangeProblem('pypi', '^1.0') // '"^1.0" is not supported for pypi: ...'
 */
export function rangeProblem(ecosystem: Ecosystem, range: string): string | null {
  if (ecosystem === 'npm') return semver.validRange(range) === null ? `invalid semver range ${range}` : null
  const parsed = parseRange(ecosystem, range)
  return 'error' in parsed ? parsed.error : null
}

/**
 * Whether `version` is in `range` under the ecosystem's ordering. Pre-releases (PEP 440 pre/dev,
 * NuGet labels, npm prereleases, Maven SNAPSHOTs) are in a range only when `includePrerelease`
 * is set: PyPI/Maven/NuGet rules pass true (a blocking range must not miss `2.0rc1`), npm rules
 * keep semver's convention (false), exceptions pass false (an exception loosens policy, so it
 * stays as narrow as written). Invalid input never matches.
 * @example inVersionRange('pypi', '1.5', '>=1.0 <2.0', true) // true
 */
export function inVersionRange(ecosystem: Ecosystem, version: string, range: string, includePrerelease: boolean): boolean {
  if (ecosystem === 'npm') {
    return semver.valid(version) !== null && semver.validRange(range) !== null && semver.satisfies(version, range, { includePrerelease })
  }
  const ordering = versionOrdering(ecosystem)
  const sets = parseRange(ecosystem, range)
  if ('error' in sets || !ordering.valid(version)) return false
  if (!includePrerelease && ordering.prerelease(version)) return false
  return sets.some((set) => set.every((comparator) => holds(ecosystem, version, comparator)))
}
