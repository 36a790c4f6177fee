import type { ExposureRecord } from '../../storage/repositories/exposures'
import type { InventoryRef, InventoryVersion } from '../../storage/repositories/inventory'
import { mapOf } from '../common/own'
import { logger } from '../app/logger'
import type { AdvisoryLookup } from '../advisories/lookup'
import type { Advisory, AdvisoryIndex } from '../advisories/types'
import type { AdvisoryChangeListener } from '../advisories/catalog'
import { makeEvent } from '../events/factory'
import type { ExposureData } from '../events/schemas'
import type { Ecosystem } from '../firewall/schema'
import { changedAdvisories } from './changes'
import { dedupe, exposureOf, exposuresOf, packagesNamed } from './match'
import type { ExposureDetectionPorts } from './ports'

/** Package documents read per storage round trip. */
const BATCH = 500

/** What `follow` listens to: the advisory catalogue's changes. */
export interface AdvisoryChanges {
  onChange(listener: AdvisoryChangeListener): () => void
}

/**
 * Matches advisory data against the firewalls' inventories and stores what it finds as exposures,
 * each with its `firewall.exposure` event, once (ExposureRepository.recordNew: the id is derived
 * from firewall, version and advisory, and written only where absent, so restarts, repeated
 * refreshes and other processes never detect one twice).
 *
 * - `detect(changed)` reads the inventory by the package names the changed advisories name: its
 *   cost follows the advisories and their matches (times the namespaces), not the inventory.
 * - `scan(lookup)` walks the whole inventory (start-up catch-up: data that changed while no process
 *   ran, or a feed loaded for the first time here, has no previous index to compare with).
 */
export class ExposureDetector {
  private work: Promise<unknown> = Promise.resolve()

  constructor(private readonly ports: ExposureDetectionPorts) {}

  /** Stores (once) the exposures `advisories` cause; returns those stored now. */
  async detect(advisories: Iterable<Advisory>): Promise<ExposureRecord[]> {
    const named = packagesNamed(advisories)
    if (named.length === 0) return []
    await this.ports.inventory.flush()
    const detectedAt = new Date(this.ports.clock.now()).toISOString()
    const stored: ExposureRecord[] = []
    for (const ns of await this.ports.namespaces.ids()) {
      const found: ExposureRecord[] = []
      for (let start = 0; start < named.length; start += BATCH) {
        const chunk = named.slice(start, start + BATCH)
        const docs = await this.ports.inventoryStore.packages(ns, chunk)
        chunk.forEach((entry, i) => {
          const doc = docs[i]
          if (doc) found.push(...exposuresOf(entry, doc, detectedAt))
        })
      }
      stored.push(...(await this.store(ns, found)))
    }
    return stored
  }

  /** Matches every served version of the inventory (of `ecosystems`, all when omitted) with `lookup`. */
  async scan(lookup: AdvisoryLookup, ecosystems?: ReadonlySet<string>): Promise<ExposureRecord[]> {
    await this.ports.inventory.flush()
    const detectedAt = new Date(this.ports.clock.now()).toISOString()
    const stored: ExposureRecord[] = []
    for (const ns of await this.ports.namespaces.ids()) {
      const refs = new Map<string, InventoryRef>()
      for (const fw of await this.ports.inventoryStore.firewallsWithInventory(ns))
        for (const ref of await this.ports.inventoryStore.firewallPackages(ns, fw))
          if (!ecosystems || ecosystems.has(ref.ecosystem)) refs.set(`${ref.ecosystem}\u0000${ref.nameKey}`, ref)
      const all = [...refs.values()]
      const found: ExposureRecord[] = []
      for (let start = 0; start < all.length; start += BATCH) {
        const chunk = all.slice(start, start + BATCH)
        const docs = await this.ports.inventoryStore.packages(ns, chunk)
        chunk.forEach((ref, i) => {
          const doc = docs[i]
          if (!doc) return
          for (const [fw, versions] of mapOf<Record<string, InventoryVersion>>(doc.firewalls))
            for (const [version, served] of mapOf<InventoryVersion>(versions)) {
              let matches
              try {
                matches = lookup.lookup(ref.ecosystem as Ecosystem, doc.packageName, version)
              } catch {
                continue // that ecosystem's data is not loaded: nothing to match yet
              }
              for (const advisory of [...matches.malware, ...matches.vulnerabilities])
                found.push(exposureOf(fw, doc, ref, version, served, advisory, detectedAt))
            }
        })
      }
      stored.push(...(await this.store(ns, dedupe(found))))
    }
    return stored
  }

  private store(ns: string, found: ExposureRecord[]): Promise<ExposureRecord[]> {
    if (found.length === 0) return Promise.resolve([])
    return this.ports.exposures.recordNew(ns, found, (record) =>
      makeEvent(this.ports.clock, ns, 'firewall.exposure', exposureData(record)),
    )
  }

  /**
   * Follows the catalogue: each change is compared with the data it replaced and the new and
   * changed advisories matched; a source seen for the first time (no previous index) is scanned.
   * Changes are handled one at a time, in order. Returns the unsubscribe function.
   */
  follow(catalog: AdvisoryChanges): () => void {
    return catalog.onChange(({ source, previous, next }) => {
      void this.enqueue(async () => {
        const found = previous
          ? await this.detect(await changedAdvisories(previous, next))
          : await this.scan(next, source === 'directory' ? undefined : new Set([source]))
        if (found.length > 0) logger.info('exposures detected', { source, count: found.length })
      })
    })
  }

  /** Runs `job` after the jobs before it (the start-up scan, earlier changes). */
  enqueue(job: () => Promise<void>): Promise<void> {
    const run = this.work
      .then(job)
      .catch((error) => logger.error('exposure detection failed', { error: String(error) }))
    this.work = run
    return run
  }

  /** Resolves when the work queued so far is done. */
  async idle(): Promise<void> {
    let seen: Promise<unknown>
    do {
      seen = this.work
      await seen
    } while (seen !== this.work)
  }

  /** Scans the inventory against the whole of `index` (start-up), queued like a change. */
  catchUp(index: AdvisoryIndex): Promise<void> {
    return this.enqueue(async () => {
      const found = await this.scan(index)
      if (found.length > 0) logger.info('exposures detected at start', { count: found.length })
    })
  }
}

/** An exposure as the API and the `firewall.exposure` event show it. */
export function exposureData(record: ExposureRecord): ExposureData {
  return {
    ...record,
    ecosystem: record.ecosystem as Ecosystem,
    advisory: { ...record.advisory, severity: record.advisory.severity as ExposureData['advisory']['severity'] },
  }
}
