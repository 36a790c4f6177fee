import semver from 'semver'
import type { Exception } from '../schema'
import { matchesGlob } from './glob'
import { normalizePackageName } from './names'
import type { PackageVersionFacts } from './types'

/** Whether the exception is still in force at `now` (no `expires` = until removed). */
export function isExceptionActive(exception: Exception, now: number): boolean {
  if (!exception.expires) return true
  const expires = Date.parse(exception.expires)
  // An unparseable expiry cannot be honoured; treat it as expired rather than as forever.
  return !Number.isNaN(expires) && now < expires
}

/**
 * Whether the exception's selector covers the version. The name may be a glob (`@acme/*`).
 * `version` omitted covers every version; otherwise an exact match, or, when the text is a
 * semver range (`^1.2.0`, `1.x`) and the version is semver, range membership without
 * prereleases (an exception loosens policy, so it stays as narrow as written).
 */
export function exceptionSelectorMatches(exception: Exception, facts: PackageVersionFacts): boolean {
  const name = normalizePackageName(facts.ecosystem, facts.packageName)
  if (!matchesGlob(normalizePackageName(facts.ecosystem, exception.selector.packageName), name)) return false
  const wanted = exception.selector.version
  if (wanted === undefined || wanted === facts.version) return true
  if (semver.valid(facts.version) === null || semver.validRange(wanted) === null) return false
  return semver.satisfies(facts.version, wanted, { includePrerelease: false })
}

/**
 * Whether `exception` lets `facts` through `ruleId` at `now`: same rule id, not expired,
 * selector matches.
 */
export function exceptionApplies(exception: Exception, ruleId: string, facts: PackageVersionFacts, now: number): boolean {
  return exception.rule === ruleId && isExceptionActive(exception, now) && exceptionSelectorMatches(exception, facts)
}
