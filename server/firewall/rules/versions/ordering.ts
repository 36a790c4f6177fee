import semver from 'semver'
import type { Ecosystem } from '../../schema'
import { compareMaven, isMavenSnapshot } from './maven'
import { compareNuGet, parseNuGet } from './nuget'
import { comparePep440, isPep440Prerelease, parsePep440 } from './pep440'

/** One ecosystem's version ordering: which texts are versions, their order, pre-release-ness. */
export interface VersionOrdering {
  valid(version: string): boolean
  /** Negative, zero or positive; only called with valid versions. */
  compare(a: string, b: string): number
  prerelease(version: string): boolean
}

const ORDERINGS: Record<Ecosystem, VersionOrdering> = {
  npm: {
    valid: (v) => semver.valid(v) !== null,
    compare: (a, b) => semver.compare(a, b),
    prerelease: (v) => (semver.prerelease(v)?.length ?? 0) > 0,
  },
  pypi: {
    valid: (v) => parsePep440(v) !== null,
    compare: (a, b) => comparePep440(parsePep440(a)!, parsePep440(b)!),
    prerelease: (v) => isPep440Prerelease(parsePep440(v)!),
  },
  maven: {
    // Maven accepts any text as a version; an empty one cannot be ordered meaningfully.
    valid: (v) => v.trim() !== '',
    compare: compareMaven,
    prerelease: isMavenSnapshot,
  },
  nuget: {
    valid: (v) => parseNuGet(v) !== null,
    compare: (a, b) => compareNuGet(parseNuGet(a)!, parseNuGet(b)!),
    prerelease: (v) => (parseNuGet(v)?.prerelease.length ?? 0) > 0,
  },
}

/**
 * The version ordering of an ecosystem: semver (npm), PEP 440 (PyPI), Maven ComparableVersion,
 * NuGet SemVer 2.
 * @example versionOrdering('pypi').compare('1.0', '1.0.0') // 0
 */
export function versionOrdering(ecosystem: Ecosystem): VersionOrdering {
  return ORDERINGS[ecosystem]
}

/**
 * Whether two version texts name the same version in the ecosystem (`1.0` = `1.0.0` on PyPI,
 * case-insensitive labels on NuGet); invalid texts only equal themselves.
 */
export function sameVersion(ecosystem: Ecosystem, a: string, b: string): boolean {
  if (a === b) return true
  const ordering = ORDERINGS[ecosystem]
  return ordering.valid(a) && ordering.valid(b) && ordering.compare(a, b) === 0
}
