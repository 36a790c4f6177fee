import { LRUCache } from 'lru-cache'
import type { Backend } from '../backend'
import { mapOf, recordOf } from '../own'
import {
  SERVED_TO_KEPT,
  type InventoryAddition,
  type InventoryPackage,
  type InventoryVersion,
} from '../model/inventory'
import { keys } from './keys'

export type { InventoryAddition, InventoryPackage, InventoryVersion } from '../model/inventory'

/** A package of a namespace's inventory: its ecosystem and its name key (normalized name). */
export interface InventoryRef {
  ecosystem: string
  nameKey: string
}

/** The stored form of a firewall's package list. */
interface StoredIndex {
  items: Record<string, true>
}

/**
 * Packages merged per transaction: a flush of many packages is several bounded writes, each short
 * enough not to hold a download behind it (bench:inventory, p99 added per download: 810-873 µs
 * with 100 per write, -101 to +553 µs, within the noise of the run without inventory, with 20).
 */
const PACKAGES_PER_WRITE = 20
/** (firewall, package) pairs a writer remembers as indexed: skipping the index read on a repeat. */
export const INDEXED_PAIRS_REMEMBERED = 100_000

/** A package's first write for a firewall found its index unread: the write is done again with it. */
class IndexNeeded extends Error {}

const refOf = (ref: InventoryRef) => `${ref.ecosystem}:${encodeURIComponent(ref.nameKey)}`

/** The package a firewall index entry names; null for an entry of another shape. */
export function parseInventoryRef(ref: string): InventoryRef | null {
  const at = ref.indexOf(':')
  if (at <= 0) return null
  try {
    return { ecosystem: ref.slice(0, at), nameKey: decodeURIComponent(ref.slice(at + 1)) }
  } catch {
    return null
  }
}

/** `servedTo` lists merged: `newer` first, then the rest of `older`, each id once, at most 100. */
export function mergeServedTo(newer: readonly string[], older: readonly string[]): string[] {
  const merged = [...new Set([...newer, ...older])]
  return merged.slice(0, SERVED_TO_KEPT)
}

/**
 * One version's stored record with an addition merged in: counts add, first times take the minimum,
 * last times the maximum. What makes writes from several processes commute (none overwrites another).
 */
export function mergeVersion(stored: InventoryVersion | undefined, addition: InventoryAddition): InventoryVersion {
  if (!stored)
    return {
      firstServedAt: addition.firstServedAt,
      lastServedAt: addition.lastServedAt,
      count: addition.count,
      servedTo: addition.servedTo.slice(0, SERVED_TO_KEPT),
    }
  const newerFirst = addition.lastServedAt >= stored.lastServedAt
  return {
    firstServedAt: Math.min(stored.firstServedAt, addition.firstServedAt),
    lastServedAt: Math.max(stored.lastServedAt, addition.lastServedAt),
    count: stored.count + addition.count,
    servedTo: newerFirst
      ? mergeServedTo(addition.servedTo, stored.servedTo)
      : mergeServedTo(stored.servedTo, addition.servedTo),
  }
}

/**
 * The firewalls' inventories: one document per package of a namespace (every firewall's served
 * versions of it, read by name when advisories change) and one package list per firewall (read
 * to list a firewall's inventory). Writes merge (see `mergeVersion`), so the accumulators of
 * several processes may flush into the same package at once.
 */
export class InventoryRepository {
  private readonly indexed = new LRUCache<string, true>({ max: INDEXED_PAIRS_REMEMBERED })

  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  /** Merges served versions of one namespace into storage. */
  async merge(ns: string, additions: InventoryAddition[]): Promise<void> {
    const byPackage = new Map<string, InventoryAddition[]>()
    for (const addition of additions) {
      const key = keys.inventoryPackage(ns, addition.ecosystem, addition.nameKey)
      const list = byPackage.get(key)
      if (list) list.push(addition)
      else byPackage.set(key, [addition])
    }
    const entries = [...byPackage]
    for (let start = 0; start < entries.length; start += PACKAGES_PER_WRITE) {
      await this.mergePackages(ns, new Map(entries.slice(start, start + PACKAGES_PER_WRITE)))
    }
  }

  private async mergePackages(ns: string, byPackage: Map<string, InventoryAddition[]>): Promise<void> {
    const pairs = new Map<string, { fw: string; ref: string }>()
    for (const list of byPackage.values())
      for (const a of list) {
        const ref = refOf(a)
        pairs.set(`${ns}\u0000${a.firewall}\u0000${ref}`, { fw: a.firewall, ref })
      }
    const indexKeys = (all: boolean) => [
      ...new Set(
        [...pairs].filter(([pair]) => all || !this.indexed.has(pair)).map(([, p]) => keys.inventoryIndex(ns, p.fw)),
      ),
    ]
    const write = (withIndexes: string[]) =>
      this.backend.keyValue.transact([...byPackage.keys(), ...withIndexes], (values) => {
        const set: Record<string, unknown> = {}
        const newRefs = new Map<string, Set<string>>()
        for (const [key, list] of byPackage) {
          const stored = values.get(key) as InventoryPackage | null
          const firewalls = mapOf<Record<string, InventoryVersion>>(stored?.firewalls)
          for (const addition of list) {
            const versions = mapOf<InventoryVersion>(firewalls.get(addition.firewall))
            if (!firewalls.has(addition.firewall)) {
              const indexKey = keys.inventoryIndex(ns, addition.firewall)
              if (!values.has(indexKey)) throw new IndexNeeded()
              const refs = newRefs.get(indexKey) ?? new Set()
              newRefs.set(indexKey, refs.add(refOf(addition)))
            }
            versions.set(addition.version, mergeVersion(versions.get(addition.version), addition))
            firewalls.set(addition.firewall, recordOf(versions))
          }
          const doc: InventoryPackage = {
            ecosystem: stored?.ecosystem ?? list[0].ecosystem,
            packageName: stored?.packageName ?? list[0].packageName,
            firewalls: recordOf(firewalls),
          }
          set[key] = doc
        }
        for (const [indexKey, refs] of newRefs) {
          const items = mapOf<true>((values.get(indexKey) as StoredIndex | null)?.items)
          for (const ref of refs) items.set(ref, true)
          set[indexKey] = { items: recordOf(items) } satisfies StoredIndex
        }
        return { writes: { set }, result: undefined }
      })
    try {
      await write(indexKeys(false))
    } catch (error) {
      if (!(error instanceof IndexNeeded)) throw error
      await write(indexKeys(true))
    }
    for (const pair of pairs.keys()) this.indexed.set(pair, true)
  }

  /** The packages one firewall served (unordered). */
  async firewallPackages(ns: string, fw: string): Promise<InventoryRef[]> {
    const index = await this.backend.keyValue.get<StoredIndex>(keys.inventoryIndex(ns, fw))
    return [...mapOf<true>(index?.items).keys()].flatMap((ref) => parseInventoryRef(ref) ?? [])
  }

  /** The stored documents of `refs`, in their order (null where none is stored). */
  packages(ns: string, refs: readonly InventoryRef[]): Promise<(InventoryPackage | null)[]> {
    if (refs.length === 0) return Promise.resolve([])
    return this.backend.keyValue.getMany<InventoryPackage>(
      refs.map((ref) => keys.inventoryPackage(ns, ref.ecosystem, ref.nameKey)),
    )
  }

  /** Firewalls of `ns` with an inventory (a scan: for the retention pass, not for requests). */
  async firewallsWithInventory(ns: string): Promise<string[]> {
    const prefix = keys.inventoryIndex(ns, '')
    const found = await this.backend.keyValue.keys(prefix)
    return found.filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length))
  }

  /**
   * Drops the versions of firewall `fw` last served before `cutoff` (ms), the firewall's entry of a
   * package left without versions, and a package no firewall holds. Returns how many versions went.
   */
  async prune(ns: string, fw: string, cutoff: number): Promise<number> {
    const indexKey = keys.inventoryIndex(ns, fw)
    const refs = await this.firewallPackages(ns, fw)
    let removed = 0
    for (let start = 0; start < refs.length; start += PACKAGES_PER_WRITE) {
      const chunk = refs.slice(start, start + PACKAGES_PER_WRITE)
      const packageKeys = chunk.map((ref) => keys.inventoryPackage(ns, ref.ecosystem, ref.nameKey))
      removed += await this.backend.keyValue.transact([indexKey, ...packageKeys], (values) => {
        const set: Record<string, unknown> = {}
        const del: string[] = []
        const items = mapOf<true>((values.get(indexKey) as StoredIndex | null)?.items)
        let gone = 0
        chunk.forEach((ref, i) => {
          const key = packageKeys[i]
          const stored = values.get(key) as InventoryPackage | null
          const firewalls = mapOf<Record<string, InventoryVersion>>(stored?.firewalls)
          const versions = mapOf<InventoryVersion>(firewalls.get(fw))
          let changed = false
          for (const [version, entry] of versions)
            if (entry.lastServedAt < cutoff) {
              versions.delete(version)
              gone++
              changed = true
            }
          if (versions.size === 0) {
            items.delete(refOf(ref))
            if (firewalls.delete(fw)) changed = true
          } else firewalls.set(fw, recordOf(versions))
          if (!stored || !changed) return
          if (firewalls.size === 0) del.push(key)
          else set[key] = { ...stored, firewalls: recordOf(firewalls) } satisfies InventoryPackage
        })
        if (items.size === 0) del.push(indexKey)
        else set[indexKey] = { items: recordOf(items) } satisfies StoredIndex
        return { writes: { set, delete: del }, result: gone }
      })
    }
    // Rare (a retention pass): forgetting every pair costs later writes one index read each.
    if (removed > 0) this.indexed.clear()
    return removed
  }
}
