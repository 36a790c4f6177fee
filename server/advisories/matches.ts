import type { Ecosystem } from '../firewall/schema'
import { normalizePackageName } from '../firewall/rules/names'
import { isVersionAffected } from './affected'
import { OSV_ECOSYSTEMS } from './ecosystems'
import type { Advisory, AdvisoryMatches } from './types'

/**
 * The advisories among `candidates` (those filed under the package's key) that affect this version,
 * split into vulnerabilities and malware. Both index forms (built and packed) answer lookups with it.
 */
export function collectMatches(
  candidates: Iterable<Advisory>,
  ecosystem: Ecosystem,
  name: string,
  version: string,
): AdvisoryMatches {
  const matches: AdvisoryMatches = { vulnerabilities: [], malware: [] }
  const osvEcosystem = OSV_ECOSYSTEMS[ecosystem]
  const normalized = normalizePackageName(ecosystem, name)
  for (const advisory of candidates) {
    const hit = advisory.affected.some(
      (affected) =>
        affected.ecosystem === osvEcosystem &&
        normalizePackageName(ecosystem, affected.name) === normalized &&
        isVersionAffected(affected, version),
    )
    if (hit) (advisory.malware ? matches.malware : matches.vulnerabilities).push(advisory)
  }
  return matches
}
