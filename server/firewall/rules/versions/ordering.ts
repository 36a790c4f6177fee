import type { Ecosystem } from '../../schema'
import { ecosystemProfile } from '../../ecosystems'
import type { VersionOrdering } from './orderings'

export type { VersionOrdering } from './orderings'

/**
 * The version ordering of an ecosystem: semver (npm), PEP 440 (PyPI), Maven ComparableVersion,
 * NuGet SemVer 2.
 * @example versionOrdering('pypi').compare('1.0', '1.0.0') // 0
 */
export function versionOrdering(ecosystem: Ecosystem): VersionOrdering {
  return ecosystemProfile(ecosystem).ordering
}

/**
 * Whether two version texts name the same version in the ecosystem (`1.0` = `1.0.0` on PyPI,
 * case-insensitive labels on NuGet); invalid texts only equal themselves.
 */
export function sameVersion(ecosystem: Ecosystem, a: string, b: string): boolean {
  if (a === b) return true
  const ordering = versionOrdering(ecosystem)
  return ordering.valid(a) && ordering.valid(b) && ordering.compare(a, b) === 0
}
