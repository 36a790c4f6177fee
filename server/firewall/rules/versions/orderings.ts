import * as pep440 from '@renovatebot/pep440'
import semver from 'semver'
import { compareMaven, isMavenSnapshot } from './maven'
import { compareNuGet, parseNuGet } from './nuget'

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

/**
 * PEP 440 (PyPI), with the specification's normalisations and the ordering of pypa/packaging.
 * Trimmed first: the specification allows whitespace around a version, the library does not.
 * Dev releases count as pre-releases, as in packaging.
 */
export const PEP440_ORDERING: VersionOrdering = {
  valid: (v) => pep440.valid(v.trim()) !== null,
  compare: (a, b) => pep440.compare(a.trim(), b.trim()),
  prerelease: (v) => pep440.explain(v.trim())?.is_prerelease ?? false,
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
