import { createHash } from 'node:crypto'
import type { ExposureRecord } from '../../storage/repositories/exposures'
import type { InventoryPackage, InventoryRef, InventoryVersion } from '../../storage/repositories/inventory'
import { isVersionAffected } from '../advisories/affected'
import { fromOsvEcosystem } from '../advisories/ecosystems'
import type { Advisory, AffectedPackage } from '../advisories/types'
import { mapOf } from '../common/own'
import { normalizePackageName } from '../firewall/rules/names'

/** The packages a set of advisories names, with what each advisory says of the package. */
export interface NamedPackage extends InventoryRef {
  advisories: { advisory: Advisory; affected: AffectedPackage }[]
}

const refKey = (ecosystem: string, nameKey: string) => `${ecosystem}\u0000${nameKey}`

/**
 * Groups advisories by the packages they name (in the firewall's ecosystems and name form): the
 * keys the exposure match reads the inventory by. Linear in the advisories.
 * @example packagesNamed([malRecord]) // [{ ecosystem: 'npm', nameKey: 'evil', advisories: [...] }]
 */
export function packagesNamed(advisories: Iterable<Advisory>): NamedPackage[] {
  const named = new Map<string, NamedPackage>()
  for (const advisory of advisories)
    for (const affected of advisory.affected) {
      const ecosystem = fromOsvEcosystem(affected.ecosystem)
      if (!ecosystem) continue
      const nameKey = normalizePackageName(ecosystem, affected.name)
      const key = refKey(ecosystem, nameKey)
      let entry = named.get(key)
      if (!entry) named.set(key, (entry = { ecosystem, nameKey, advisories: [] }))
      entry.advisories.push({ advisory, affected })
    }
  return [...named.values()]
}

/**
 * The exposure id of a firewall, version and advisory: derived, so that every detection of the
 * same one (another refresh, a restart, another process) names the same record.
 */
export function exposureId(firewall: string, ref: InventoryRef, version: string, advisory: string): string {
  const digest = createHash('sha256')
    .update([firewall, ref.ecosystem, ref.nameKey, version, advisory].join('\u0000'))
    .digest('hex')
  return `exp-${digest.slice(0, 32)}`
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The exposure record of one served version and one advisory naming it. */
export function exposureOf(
  firewall: string,
  doc: InventoryPackage,
  ref: InventoryRef,
  version: string,
  served: InventoryVersion,
  advisory: Advisory,
  detectedAt: string,
): ExposureRecord {
  return {
    id: exposureId(firewall, ref, version, advisory.id),
    firewall,
    ecosystem: doc.ecosystem,
    packageName: doc.packageName,
    version,
    advisory: {
      id: advisory.id,
      aliases: [...advisory.aliases],
      kind: advisory.malware ? 'malware' : 'vulnerability',
      ...(advisory.severity ? { severity: advisory.severity } : {}),
    },
    firstServedAt: iso(served.firstServedAt),
    lastServedAt: iso(served.lastServedAt),
    servedTo: served.servedTo,
    detectedAt,
    status: 'open',
  }
}

/**
 * The exposures of one stored package: every version any firewall served that one of the named
 * advisories affects. Linear in the package's served versions times its advisories.
 */
export function exposuresOf(named: NamedPackage, doc: InventoryPackage, detectedAt: string): ExposureRecord[] {
  const found: ExposureRecord[] = []
  for (const [firewall, versions] of mapOf<Record<string, InventoryVersion>>(doc.firewalls))
    for (const [version, served] of mapOf<InventoryVersion>(versions))
      for (const { advisory, affected } of named.advisories)
        if (isVersionAffected(affected, version))
          found.push(exposureOf(firewall, doc, named, version, served, advisory, detectedAt))
  return dedupe(found)
}

/** One record per id (an advisory naming a package twice matches once). */
export function dedupe(records: ExposureRecord[]): ExposureRecord[] {
  return [...new Map(records.map((record) => [record.id, record])).values()]
}
