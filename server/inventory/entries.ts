import type { InventoryPackage, InventoryRef, InventoryVersion } from '../../storage/repositories/inventory'
import { mapOf } from '../common/own'

/** One served version as the inventory API shows it (CONTRACT section 3). */
export interface InventoryEntry {
  firewall: string
  packageName: string
  version: string
  ecosystem: string
  firstServedAt: string
  lastServedAt: string
  count: number
  servedTo: string[]
}

/** Which served versions a query wants: names compared as the ecosystem's registry does. */
export interface InventoryFilter {
  /** Normalized name: compared with the stored name key. */
  nameKey?: (ecosystem: string) => string
  version?: string
  /** ms: served at some time within [since, until]. */
  since?: number
  until?: number
  /** Firewalls whose entries are shown. */
  firewalls: ReadonlySet<string>
}

const iso = (ms: number) => new Date(ms).toISOString()

/** A stored version as an entry. */
export function entryOf(doc: InventoryPackage, firewall: string, version: string, v: InventoryVersion): InventoryEntry {
  return {
    firewall,
    packageName: doc.packageName,
    version,
    ecosystem: doc.ecosystem,
    firstServedAt: iso(v.firstServedAt),
    lastServedAt: iso(v.lastServedAt),
    count: v.count,
    servedTo: v.servedTo,
  }
}

/** Whether a served version's time span meets [since, until]. */
export function servedWithin(v: InventoryVersion, since?: number, until?: number): boolean {
  return (since === undefined || v.lastServedAt >= since) && (until === undefined || v.firstServedAt <= until)
}

/** Sort key of an entry: package, then firewall, then version; the cursor is the last one shown. */
export const entryKey = (ref: InventoryRef, firewall: string, version: string) =>
  `${ref.ecosystem}\u0000${ref.nameKey}\u0000${firewall}\u0000${version}`

/** The entries of one package document a filter keeps, in key order. */
export function entriesOf(
  ref: InventoryRef,
  doc: InventoryPackage,
  filter: InventoryFilter,
): { key: string; entry: InventoryEntry }[] {
  if (filter.nameKey && filter.nameKey(ref.ecosystem) !== ref.nameKey) return []
  const found: { key: string; entry: InventoryEntry }[] = []
  for (const [firewall, versions] of mapOf<Record<string, InventoryVersion>>(doc.firewalls)) {
    if (!filter.firewalls.has(firewall)) continue
    for (const [version, v] of mapOf<InventoryVersion>(versions)) {
      if (filter.version !== undefined && version !== filter.version) continue
      if (!servedWithin(v, filter.since, filter.until)) continue
      found.push({ key: entryKey(ref, firewall, version), entry: entryOf(doc, firewall, version, v) })
    }
  }
  return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}
