import type { Ecosystem } from '../schema'
import { normalizePackageName } from '../rules/names'
import { isVersionAffected } from './affected'
import type { Advisory, AdvisoryIndex, AdvisoryMatches } from './types'

/** Our ecosystem names and OSV's (https://ossf.github.io/osv-schema/#affectedpackage-field). */
export const OSV_ECOSYSTEMS: Record<Ecosystem, string> = { npm: 'npm', pypi: 'PyPI', maven: 'Maven', nuget: 'NuGet' }

const FROM_OSV = new Map(Object.entries(OSV_ECOSYSTEMS).map(([ours, osv]) => [osv, ours as Ecosystem]))

function key(ecosystem: Ecosystem, name: string): string {
  return `${ecosystem}\u0000${normalizePackageName(ecosystem, name)}`
}

/**
 * Builds an index over advisories keyed by ecosystem and normalized package name. Advisories
 * for ecosystems the firewall does not serve (Debian, Go, ...) are kept for `all()` but never
 * returned by `lookup`. A later advisory with an id already held is ignored.
 * @example createAdvisoryIndex(advisories).lookup('npm', 'lodash', '4.17.20').vulnerabilities
 */
export function createAdvisoryIndex(advisories: Iterable<Advisory>): AdvisoryIndex {
  const byId = new Map<string, Advisory>()
  const byPackage = new Map<string, Advisory[]>()
  for (const advisory of advisories) {
    if (byId.has(advisory.id)) continue
    byId.set(advisory.id, advisory)
    const keys = new Set<string>()
    for (const affected of advisory.affected) {
      const ecosystem = FROM_OSV.get(affected.ecosystem)
      if (ecosystem) keys.add(key(ecosystem, affected.name))
    }
    for (const k of keys) {
      const list = byPackage.get(k)
      if (list) list.push(advisory)
      else byPackage.set(k, [advisory])
    }
  }

  return {
    size: byId.size,
    all: () => byId.values(),
    lookup(ecosystem, name, version): AdvisoryMatches {
      const matches: AdvisoryMatches = { vulnerabilities: [], malware: [] }
      const osvEcosystem = OSV_ECOSYSTEMS[ecosystem]
      const normalized = normalizePackageName(ecosystem, name)
      for (const advisory of byPackage.get(key(ecosystem, name)) ?? []) {
        const hit = advisory.affected.some(
          (affected) =>
            affected.ecosystem === osvEcosystem &&
            normalizePackageName(ecosystem, affected.name) === normalized &&
            isVersionAffected(affected, version),
        )
        if (hit) (advisory.malware ? matches.malware : matches.vulnerabilities).push(advisory)
      }
      return matches
    },
  }
}

/** An index holding nothing: the default before any advisory source is loaded. */
export const EMPTY_ADVISORY_INDEX: AdvisoryIndex = createAdvisoryIndex([])

/**
 * Combines indexes (e.g. `ADVISORY_DIR` records and an upstream's bulk advisories); when two
 * hold the same advisory id the first index wins.
 */
export function mergeAdvisoryIndexes(...indexes: AdvisoryIndex[]): AdvisoryIndex {
  return createAdvisoryIndex(
    (function* () {
      for (const index of indexes) yield* index.all()
    })(),
  )
}
