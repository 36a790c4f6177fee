import { eventLogOf, notifiedNamespace, type TxOutcome, type TxWrites } from '../backend'
import { KeyedMutex } from '../keyed-mutex'
import { TimeSlice } from '../time-slice'
import type { KeyValueStore } from '../ports'
import type { LocalLogs } from './logs'
import type { LocalSignals } from './signals'
import type { LocalValues } from './values'

/** Key-value port of one process: transactions are atomic under in-process locks on their keys. */
export class LocalKeyValue implements KeyValueStore {
  private readonly mutex = new KeyedMutex()

  constructor(
    private readonly values: LocalValues,
    private readonly logs: LocalLogs,
    private readonly signals: LocalSignals,
  ) {}

  get<T>(key: string): Promise<T | null> {
    return this.values.get<T>(key)
  }

  async getMany<T>(keys: string[], options: { ordered?: boolean } = {}): Promise<(T | null)[]> {
    if (!options.ordered) return this.values.getMany<T>(keys)
    // Files read together may be read in any order: one after another instead.
    const values: (T | null)[] = []
    for (const key of keys) values.push(await this.values.get<T>(key))
    return values
  }

  set(key: string, value: unknown): Promise<void> {
    return this.values.set(key, value)
  }

  delete(key: string): Promise<void> {
    return this.values.delete(key)
  }

  keys(prefix: string): Promise<string[]> {
    return this.values.keys(prefix)
  }

  has(key: string): Promise<boolean> {
    return this.values.has(key)
  }

  getBytes(key: string): Promise<Buffer | null> {
    return this.values.getBytes(key)
  }

  setBytes(key: string, bytes: Uint8Array): Promise<void> {
    return this.values.setBytes(key, bytes)
  }

  async moveKey(from: string, to: string): Promise<boolean> {
    const raw = await this.values.getRaw(from)
    if (raw == null) return false
    const storage = this.values.storage
    if (!(await storage.hasItem(to))) await storage.setItemRaw(to, raw)
    await storage.removeItem(from)
    // Log and queue positions are cached per prefix: any of them may have just moved.
    this.logs.forgetPositions()
    return true
  }

  /** Reads are local and the keys locked: `options.assume` saves nothing here and is ignored. */
  transact<R>(
    keys: string[],
    body: (values: Map<string, unknown>) => TxOutcome<R> | Promise<TxOutcome<R>>,
  ): Promise<R> {
    return this.mutex.runExclusive(keys, async () => {
      const current = await this.values.getMany(keys)
      const values = new Map(keys.map((key, index) => [key, current[index] as unknown]))
      const { writes, result } = await body(values)
      await this.applyWrites(keys, writes)
      return result
    })
  }

  private async applyWrites(txKeys: string[], writes: TxWrites): Promise<void> {
    const eventLog = eventLogOf(txKeys, writes)
    const notified = notifiedNamespace(eventLog, writes)
    // Every value is serialised before any is written: serialising a large one takes turns, and a
    // small one (a write stamp) written meanwhile would be read beside the old large one by a
    // reader that takes no lock (the firewall cache would keep that pair under the new stamp).
    // One after another in one budget: started together, each would take its own slice in every turn.
    const slice = new TimeSlice()
    const keyLists = new WeakMap<object, string[]>()
    const prepared: [string, unknown][] = []
    for (const [key, value] of Object.entries(writes.set ?? {}))
      prepared.push([key, await this.values.prepare(value, slice, keyLists)])
    await Promise.all([
      ...prepared.map(([key, value]) => this.values.write(key, value)),
      ...(writes.delete ?? []).map((key) => this.values.delete(key)),
    ])
    for (const [log, entries] of Object.entries(writes.logs ?? {})) await this.logs.append(log, entries)
    if (eventLog) await this.logs.append(eventLog.log, writes.events!)
    if (notified !== null) this.signals.eventsAppended(notified)
  }
}
