import type { Ecosystem } from '../../schema'
import { ecosystemProfile } from '../../ecosystems'

/**
 * Why a range text cannot be used for the ecosystem, or null when it can (syntax per ecosystem:
 * see range-syntax.ts).
 * @example rangeProblem('pypi', '^1.0') // '"^1.0" is not supported for pypi: ...'
 */
export function rangeProblem(ecosystem: Ecosystem, range: string): string | null {
  return ecosystemProfile(ecosystem).ranges.problem(range)
}

/**
 * Whether `version` is in `range` under the ecosystem's ordering. Pre-releases (PEP 440 pre/dev,
 * NuGet labels, npm prereleases, Maven SNAPSHOTs) are in a range only when `includePrerelease`
 * is set: rules pass their ecosystem's `rangesIncludePrereleases` (a blocking PyPI range must not
 * miss `2.0rc1`; npm keeps semver's convention), exceptions pass false (an exception loosens
 * policy, so it stays as narrow as written). Invalid input never matches.
 * @example inVersionRange('pypi', '1.5', '>=1.0 <2.0', true) // true
 */
export function inVersionRange(
  ecosystem: Ecosystem,
  version: string,
  range: string,
  includePrerelease: boolean,
): boolean {
  return ecosystemProfile(ecosystem).ranges.includes(version, range, includePrerelease)
}
