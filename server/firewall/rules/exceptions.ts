import type { Exception } from '../schema'
import { matchesGlob } from './glob'
import { normalizePackageName } from './names'
import { sameVersion } from './versions/ordering'
import { inVersionRange } from './versions/range'
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
 * `version` omitted covers every version; otherwise the same version in the ecosystem's
 * ordering (`1.0` = `1.0.0` on PyPI), or membership of the ecosystem's range syntax without
 * pre-releases (an exception loosens policy, so it stays as narrow as written).
 */
export function exceptionSelectorMatches(exception: Exception, facts: PackageVersionFacts): boolean {
  const name = normalizePackageName(facts.ecosystem, facts.packageName)
  if (!matchesGlob(normalizePackageName(facts.ecosystem, exception.selector.packageName), name)) return false
  const wanted = exception.selector.version
  if (wanted === undefined || sameVersion(facts.ecosystem, wanted, facts.version)) return true
  return inVersionRange(facts.ecosystem, facts.version, wanted, false)
}

/**
 * Whether `exception` lets `facts` through `ruleId` at `now`: same rule id, not expired,
 * selector matches.
 */
export function exceptionApplies(
  exception: Exception,
  ruleId: string,
  facts: PackageVersionFacts,
  now: number,
): boolean {
  return exception.rule === ruleId && isExceptionActive(exception, now) && exceptionSelectorMatches(exception, facts)
}
