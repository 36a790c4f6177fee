import { AsyncResource } from 'node:async_hooks'
import { EventEmitter } from 'node:events'
import { createStorage, type Storage } from 'unstorage'
import { KeyedMutex } from './keyed-mutex'
import { reasonOf, StorageFailure } from './storage-failure'
import { eventLogOf, type Backend, type LogEntry, type LogRangeOptions, type TxOutcome, type TxWrites } from './backend'

interface StoredLogEntry {
  t: number
  v: unknown
}

interface Sequence {
  head: number
  /** Next free slot. */
  tail: number
}

const pad = (n: number) => n.toString().padStart(12, '0')

/**
 * A driver's answer as a stored value. Stored values are JSON, so an Error object is a driver
 * reporting a failure the way unstorage's fs helpers do (`readFile(...).catch(e => e)`): thrown.
 */
function storedValue(value: unknown): unknown {
  if (value instanceof Error) throw new StorageFailure('read', reasonOf(value), { cause: value })
  return value
}

/** A driver call that failed is a StorageFailure (503 at the edge), whichever driver it was. */
async function failing<T>(operation: string, call: Promise<T>): Promise<T> {
  try {
    return await call
  } catch (error) {
    throw error instanceof StorageFailure ? error : new StorageFailure(operation, reasonOf(error), { cause: error })
  }
}

/**
 * The single-process backend: any unstorage driver (fs by default, memory in unit tests)
 * plus in-process locks. Logs keep one key per entry, so an append writes one
 * small file and a crash loses nothing that was acknowledged.
 */
export class LocalBackend implements Backend {
  readonly kind = 'local' as const
  private readonly mutex = new KeyedMutex()
  private readonly sequences = new Map<string, Promise<Sequence>>()
  private readonly leases = new Map<string, { owner: string; until: number }>()
  private readonly emitter = new EventEmitter()

  constructor(readonly storage: Storage = createStorage()) {
    this.emitter.setMaxListeners(0)
  }

  async get<T>(key: string): Promise<T | null> {
    return storedValue(await failing('read', this.storage.getItem<T>(key))) as T | null
  }

  /** Reads go through the driver's limit (atomic-fs-driver.ts); one failed read fails them all. */
  async getMany<T>(keys: string[]): Promise<(T | null)[]> {
    if (keys.length === 0) return []
    const items = await failing('read', this.storage.getItems(keys))
    const byKey = new Map(items.map((item) => [item.key, storedValue(item.value)]))
    return keys.map((key) => (byKey.get(key) ?? null) as T | null)
  }

  set(key: string, value: unknown): Promise<void> {
    return failing('write', this.storage.setItem(key, value as never))
  }

  delete(key: string): Promise<void> {
    return failing('remove', this.storage.removeItem(key))
  }

  keys(prefix: string): Promise<string[]> {
    return failing('list', this.storage.getKeys(prefix))
  }

  has(key: string): Promise<boolean> {
    return this.storage.hasItem(key)
  }

  async moveKey(from: string, to: string): Promise<boolean> {
    const raw = storedValue(await failing('read', this.storage.getItemRaw(from)))
    if (raw == null) return false
    if (!(await this.storage.hasItem(to))) await this.storage.setItemRaw(to, raw)
    await this.storage.removeItem(from)
    // Log and queue positions are cached per prefix: any of them may have just moved.
    this.sequences.clear()
    return true
  }

  async getBytes(key: string): Promise<Buffer | null> {
    const raw = storedValue(await failing('read', this.storage.getItemRaw(key)))
    if (raw == null) return null
    return Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array)
  }

  setBytes(key: string, bytes: Uint8Array): Promise<void> {
    return failing('write', this.storage.setItemRaw(key, bytes))
  }

  /** Reads are local and the keys locked: `options.assume` saves nothing here and is ignored. */
  transact<R>(
    keys: string[],
    body: (values: Map<string, unknown>) => TxOutcome<R> | Promise<TxOutcome<R>>,
  ): Promise<R> {
    return this.mutex.runExclusive(keys, async () => {
      const current = await this.getMany(keys)
      const values = new Map(keys.map((key, index) => [key, current[index] as unknown]))
      const { writes, result } = await body(values)
      await this.applyWrites(keys, writes)
      return result
    })
  }

  private async applyWrites(txKeys: string[], writes: TxWrites): Promise<void> {
    const eventLog = eventLogOf(txKeys, writes)
    await Promise.all([
      ...Object.entries(writes.set ?? {}).map(([key, value]) => this.set(key, value)),
      ...(writes.delete ?? []).map((key) => this.delete(key)),
    ])
    for (const [log, entries] of Object.entries(writes.logs ?? {})) await this.logAppend(log, entries)
    if (eventLog) {
      await this.logAppend(eventLog.log, writes.events!)
      this.emitter.emit('events', eventLog.ns)
    }
  }

  // ---- logs: one key per entry, sequence numbers kept in memory -----------------------

  private sequence(prefix: string): Promise<Sequence> {
    let sequence = this.sequences.get(prefix)
    if (!sequence) {
      sequence = this.storage.getKeys(prefix).then((keys) => {
        const slots = keys.map((key) => Number(key.slice(prefix.length + 1))).filter(Number.isFinite)
        if (slots.length === 0) return { head: 0, tail: 0 }
        return { head: Math.min(...slots), tail: Math.max(...slots) + 1 }
      })
      this.sequences.set(prefix, sequence)
      // A failed listing (storage failure) is not remembered: the next call lists again.
      sequence.catch(() => {
        if (this.sequences.get(prefix) === sequence) this.sequences.delete(prefix)
      })
    }
    return sequence
  }

  logAppend(log: string, entries: unknown[]): Promise<string[]> {
    const now = Date.now()
    return this.appendDated(
      log,
      entries.map((value) => ({ time: now, value })),
      false,
    )
  }

  logAppendAt(log: string, entries: { time: number; value: unknown }[]): Promise<string[]> {
    return this.appendDated(log, entries, true)
  }

  /** `keepOrder`: no entry dated before the one written ahead of it (what `logAppendAt` promises). */
  private async appendDated(
    log: string,
    entries: { time: number; value: unknown }[],
    keepOrder: boolean,
  ): Promise<string[]> {
    const prefix = `log:${log}`
    return this.mutex.runExclusive([prefix], async () => {
      const sequence = await this.sequence(prefix)
      let floor = 0
      if (keepOrder && sequence.tail > sequence.head)
        floor = (await this.get<StoredLogEntry>(`${prefix}:${pad(sequence.tail - 1)}`))?.t ?? 0
      const cursors: string[] = []
      for (const { time, value } of entries) {
        const slot = sequence.tail++
        floor = keepOrder ? Math.max(floor, time) : time
        await this.set(`${prefix}:${pad(slot)}`, { t: floor, v: value } satisfies StoredLogEntry)
        cursors.push(pad(slot))
      }
      return cursors
    })
  }

  async logRange<T>(log: string, options: LogRangeOptions): Promise<LogEntry<T>[]> {
    const prefix = `log:${log}`
    const sequence = await this.sequence(prefix)
    const newestFirst = options.newestFirst ?? options.before != null
    const slots: number[] = []
    if (newestFirst) {
      let slot = (options.before != null ? Number(options.before) : sequence.tail) - 1
      for (; slot >= sequence.head && slots.length < options.limit; slot--) slots.push(slot)
    } else {
      let slot = options.after != null ? Number(options.after) + 1 : sequence.head
      slot = Math.max(slot, sequence.head)
      for (; slot < sequence.tail && slots.length < options.limit; slot++) slots.push(slot)
    }
    const stored = await this.getMany<StoredLogEntry>(slots.map((slot) => `${prefix}:${pad(slot)}`))
    return stored.flatMap((entry, index) =>
      entry ? [{ cursor: pad(slots[index]), time: entry.t, value: entry.v as T }] : [],
    )
  }

  async logTrimBefore(log: string, beforeMs: number): Promise<number> {
    const prefix = `log:${log}`
    return this.mutex.runExclusive([prefix], async () => {
      const sequence = await this.sequence(prefix)
      let removed = 0
      while (sequence.head < sequence.tail) {
        const key = `${prefix}:${pad(sequence.head)}`
        const entry = await this.get<StoredLogEntry>(key)
        if (entry && entry.t >= beforeMs) break
        await this.delete(key)
        sequence.head++
        removed++
      }
      return removed
    })
  }

  async logLength(log: string): Promise<number> {
    const sequence = await this.sequence(`log:${log}`)
    return sequence.tail - sequence.head
  }

  async queueItems<T>(queue: string): Promise<T[]> {
    const prefix = `queue:${queue}`
    const slots = (await this.storage.getKeys(prefix))
      .map((key) => key.slice(prefix.length + 1))
      .filter((slot) => /^\d+$/.test(slot))
      .sort()
    return (await this.getMany<T>(slots.map((slot) => `${prefix}:${slot}`))).filter((item) => item !== null)
  }

  // ---- leases and counters -----------------------------------------------------------

  async leaseAcquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now()
    const lease = this.leases.get(name)
    if (lease && lease.owner !== owner && lease.until > now) return false
    this.leases.set(name, { owner, until: now + ttlMs })
    return true
  }

  async leaseRelease(name: string, owner: string): Promise<void> {
    if (this.leases.get(name)?.owner === owner) this.leases.delete(name)
  }

  async leaseOwner(name: string): Promise<string | null> {
    const lease = this.leases.get(name)
    return lease && lease.until > Date.now() ? lease.owner : null
  }

  increment(key: string, by = 1): Promise<number> {
    return this.transact([key], (values) => {
      const next = Number(values.get(key) ?? 0) + by
      return { writes: { set: { [key]: next } }, result: next }
    })
  }

  onEvents(listener: (ns: string) => void): () => void {
    // Bound to the registering context: the appender's request context must not leak into the
    // background work the listener starts (as on Redis, where the wake-up comes from pub/sub).
    const bound = AsyncResource.bind(listener)
    this.emitter.on('events', bound)
    return () => this.emitter.off('events', bound)
  }

  async eventsReady(): Promise<void> {}

  async ping(): Promise<boolean> {
    try {
      await this.storage.hasItem('ping')
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners()
    await this.storage.dispose()
  }
}
