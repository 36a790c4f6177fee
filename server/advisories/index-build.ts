import type { Ecosystem } from '../firewall/schema'
import { normalizePackageName } from '../firewall/rules/names'
import { collectMatches } from './matches'
import { fromOsvEcosystem } from './ecosystems'
import type { Advisory, AdvisoryIndex } from './types'

export { OSV_ECOSYSTEMS } from './ecosystems'

function key(ecosystem: Ecosystem, name: string): string {
  return `${ecosystem}\u0000${normalizePackageName(ecosystem, name)}`
}

/**
 * Builds an index one advisory at a time, so a large feed can be indexed in slices between
 * other work and only handed out (`finish`) when complete: readers keep the previous index
 * until then. A later advisory with an id already held is ignored.
 */
class AdvisoryIndexBuilder {
  private readonly byId = new Map<string, Advisory>()
  private readonly byPackage = new Map<string, Advisory[]>()
  private readonly perEcosystem = new Map<Ecosystem, number>()

  /** Adds one advisory; false when its id is already held. */
  add(advisory: Advisory): boolean {
    if (this.byId.has(advisory.id)) return false
    this.byId.set(advisory.id, advisory)
    const keys = new Set<string>()
    const ecosystems = new Set<Ecosystem>()
    for (const affected of advisory.affected) {
      const ecosystem = fromOsvEcosystem(affected.ecosystem)
      if (!ecosystem) continue
      keys.add(key(ecosystem, affected.name))
      ecosystems.add(ecosystem)
    }
    for (const ecosystem of ecosystems) this.perEcosystem.set(ecosystem, (this.perEcosystem.get(ecosystem) ?? 0) + 1)
    for (const k of keys) {
      const list = this.byPackage.get(k)
      if (list) list.push(advisory)
      else this.byPackage.set(k, [advisory])
    }
    return true
  }

  get size(): number {
    return this.byId.size
  }

  finish(): AdvisoryIndex {
    const { byId, byPackage, perEcosystem } = this
    return {
      size: byId.size,
      all: () => byId.values(),
      count: (ecosystem) => perEcosystem.get(ecosystem) ?? 0,
      lookup: (ecosystem, name, version) =>
        collectMatches(byPackage.get(key(ecosystem, name)) ?? [], ecosystem, name, version),
    }
  }
}

/**
 * Builds an index over advisories keyed by ecosystem and normalized package name. Advisories
 * for ecosystems the firewall does not serve (Debian, Go, ...) are kept for `all()` but never
 * returned by `lookup`. A later advisory with an id already held is ignored.
 * @example createAdvisoryIndex(advisories).lookup('npm', 'lodash', '4.17.20').vulnerabilities
 */
export function createAdvisoryIndex(advisories: Iterable<Advisory>): AdvisoryIndex {
  const builder = new AdvisoryIndexBuilder()
  for (const advisory of advisories) builder.add(advisory)
  return builder.finish()
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
