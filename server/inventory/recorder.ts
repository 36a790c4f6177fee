import type { InventoryAddition, InventoryRepository } from '../../storage/repositories/inventory'
import { SERVED_TO_KEPT } from '../../storage/model/inventory'
import { logger } from '../app/logger'
import type { Ecosystem } from '../firewall/schema'
import { normalizePackageName } from '../firewall/rules/names'

/** One served version, as the registry's decision path notes it. */
export interface ServedVersion {
  ns: string
  firewall: string
  ecosystem: Ecosystem
  packageName: string
  version: string
  principal: string
  /** When it was served (ms since the epoch). */
  at: number
}

/** What the registry tells the inventory: a served version. Never waits for storage. */
export interface InventoryNotes {
  served(version: ServedVersion): void
}

/** Pending additions before a flush is started at once, whatever the interval. */
export const PENDING_FLUSH_AT = 5_000

/**
 * Distinct versions kept waiting while storage refuses every flush. Past it a version not already
 * waiting is not noted (counted in `dropped`), so a long storage outage costs bounded memory
 * (about 100 MB at ~1 KB an entry) rather than all of it.
 */
export const PENDING_KEPT = 100_000

interface Pending extends InventoryAddition {
  /** Principal -> last time, to order `servedTo` newest first. */
  principals: Map<string, number>
}

/**
 * Coalesces served versions in memory and merges them into storage every `flushMs` (and when
 * `PENDING_FLUSH_AT` distinct versions wait, and on `close`), so a download costs a Map update, not
 * a storage write. A version served 1,000 times between flushes is one merge. The merge adds
 * counts and keeps minimum and maximum times (InventoryRepository), so several processes flushing
 * the same version sum up rather than overwrite. A failed flush keeps its additions for the next.
 */
export class InventoryRecorder implements InventoryNotes {
  private pending = new Map<string, Map<string, Pending>>()
  private size = 0
  private flushing: Promise<void> | null = null
  private timer: NodeJS.Timeout | null = null
  private closed = false
  /** Set by a failed flush: until the next timed flush succeeds, size no longer starts one. */
  private failing = false
  /** Versions not noted because PENDING_KEPT were waiting (since start). */
  dropped = 0

  constructor(
    private readonly repository: Pick<InventoryRepository, 'merge'>,
    private readonly flushMs: number,
    private readonly pendingKept = PENDING_KEPT,
  ) {}

  served(v: ServedVersion): void {
    if (this.closed) return
    let ns = this.pending.get(v.ns)
    if (!ns) this.pending.set(v.ns, (ns = new Map()))
    const nameKey = normalizePackageName(v.ecosystem, v.packageName)
    const key = `${v.firewall}\u0000${v.ecosystem}\u0000${nameKey}\u0000${v.version}`
    const entry = ns.get(key)
    if (entry) {
      entry.count++
      entry.firstServedAt = Math.min(entry.firstServedAt, v.at)
      entry.lastServedAt = Math.max(entry.lastServedAt, v.at)
      entry.principals.delete(v.principal)
      entry.principals.set(v.principal, v.at)
      if (entry.principals.size > SERVED_TO_KEPT) entry.principals.delete(entry.principals.keys().next().value!)
    } else if (this.size >= this.pendingKept) {
      if (this.dropped++ === 0)
        logger.warn('inventory notes dropped: storage has refused flushes', { waiting: this.size })
    } else {
      ns.set(key, {
        firewall: v.firewall,
        ecosystem: v.ecosystem,
        packageName: v.packageName,
        nameKey,
        version: v.version,
        firstServedAt: v.at,
        lastServedAt: v.at,
        count: 1,
        servedTo: [],
        principals: new Map([[v.principal, v.at]]),
      })
      this.size++
    }
    // One flush at a time from here: a download never waits on, or queues behind, a running one,
    // and while storage refuses, only the timer retries (no flush per download).
    if (this.size >= PENDING_FLUSH_AT && !this.flushing && !this.failing) void this.flush()
    else this.schedule()
  }

  private schedule(): void {
    if (this.timer || this.closed) return
    this.timer = setTimeout(() => {
      this.timer = null
      void this.flush()
    }, this.flushMs)
    this.timer.unref()
  }

  /** Writes what is pending; resolves when it (and a flush already running) is written. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing
    if (this.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    this.size = 0
    this.flushing = this.write(batch).finally(() => (this.flushing = null))
    await this.flushing
  }

  private async write(batch: Map<string, Map<string, Pending>>): Promise<void> {
    for (const [ns, entries] of batch) {
      const additions: InventoryAddition[] = [...entries.values()].map(({ principals, ...addition }) => ({
        ...addition,
        // Insertion order is oldest first: the last principal noted is the newest.
        servedTo: [...principals.keys()].reverse(),
      }))
      try {
        await this.repository.merge(ns, additions)
        this.failing = false
      } catch (error) {
        logger.warn('inventory flush failed; kept for the next one', { namespace: ns, error: String(error) })
        this.failing = true
        if (!this.closed) this.requeue(ns, entries)
      }
    }
  }

  /** Puts a failed flush's entries back, merged with what was noted meanwhile. */
  private requeue(ns: string, entries: Map<string, Pending>): void {
    let current = this.pending.get(ns)
    if (!current) this.pending.set(ns, (current = new Map()))
    for (const [key, entry] of entries) {
      const newer = current.get(key)
      if (!newer && this.size >= this.pendingKept) {
        this.dropped++
        continue
      }
      if (!newer) {
        current.set(key, entry)
        this.size++
        continue
      }
      newer.count += entry.count
      newer.firstServedAt = Math.min(newer.firstServedAt, entry.firstServedAt)
      newer.lastServedAt = Math.max(newer.lastServedAt, entry.lastServedAt)
      newer.principals = new Map(
        [...[...entry.principals].filter(([id]) => !newer.principals.has(id)), ...newer.principals].slice(
          -SERVED_TO_KEPT,
        ),
      )
    }
    this.schedule()
  }

  /** Stops the timer and writes what is pending (shutdown). */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    await this.flush()
    this.closed = true
  }
}
