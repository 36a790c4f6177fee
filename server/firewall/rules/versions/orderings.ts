import semver from 'semver'
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

/** SemVer 2.0 (npm; also OSV `SEMVER` ranges whatever the ecosystem). */
export const SEMVER_ORDERING: VersionOrdering = {
  valid: (v) => semver.valid(v) !== null,
  compare: (a, b) => semver.compare(a, b),
  prerelease: (v) => (semver.prerelease(v)?.length ?? 0) > 0,
}

/** PEP 440 (PyPI). */
export const PEP440_ORDERING: VersionOrdering = {
  valid: (v) => parsePep440(v) !== null,
  compare: (a, b) => comparePep440(parsePep440(a)!, parsePep440(b)!),
  prerelease: (v) => isPep440Prerelease(parsePep440(v)!),
}

/** Maven ComparableVersion. */
export const MAVEN_ORDERING: VersionOrdering = {
  // Maven accepts any text as a version; an empty one cannot be ordered meaningfully.
  valid: (v) => v.trim() !== '',
  compare: compareMaven,
  prerelease: isMavenSnapshot,
}

/** NuGet SemVer 2 (case-insensitive labels, four-part versions). */
export const NUGET_ORDERING: VersionOrdering = {
  valid: (v) => parseNuGet(v) !== null,
  compare: (a, b) => compareNuGet(parseNuGet(a)!, parseNuGet(b)!),
  prerelease: (v) => (parseNuGet(v)?.prerelease.length ?? 0) > 0,
}
