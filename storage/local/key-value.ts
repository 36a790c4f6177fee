import { eventLogOf, notifiedNamespace, type TxOutcome, type TxWrites } from '../backend'
import { KeyedMutex } from '../keyed-mutex'
import { TimeSlice } from '../time-slice'
import type { KeyValueStore } from '../ports'
import type { LocalLogs } from './logs'
import type { LocalSignals } from './signals'
import type { LocalValues } from './values'
import { TransactionJournal } from './journal'

/** Key-value port of one process: transactions are atomic under in-process locks on their keys. */
export class LocalKeyValue implements KeyValueStore {
  private readonly mutex = new KeyedMutex()
  private readonly journal: TransactionJournal | null

  constructor(
    private readonly values: LocalValues,
    private readonly logs: LocalLogs,
    private readonly signals: LocalSignals,
    journaled = true,
  ) {
    this.journal = journaled ? new TransactionJournal(values) : null
  }

  /**
   * Finishes the transactions a stopped process left half written (journal.ts): call once, when
   * the storage is opened, before anything is read or written. Returns how many it finished.
   */
  async recover(): Promise<number> {
    const finished = (await this.journal?.recover()) ?? 0
    // Log slots are counted from the keys on first use: none was counted before the entries landed.
    if (finished > 0) this.logs.forgetPositions()
    return finished
  }

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
    const stamps: [string, unknown][] = []
    for (const [key, value] of Object.entries(writes.stamps ?? {}))
      stamps.push([key, await this.values.prepare(value, slice, keyLists)])
    const deleted = writes.delete ?? []
    const appended: [string, unknown[]][] = Object.entries(writes.logs ?? {})
    if (eventLog) appended.push([eventLog.log, writes.events!])
    const journal = this.journal
    // The record is forgotten once its entries are written (the keys' locks still held), so the
    // next transaction's entries of the same log need not wait for that.
    const record = await this.logs.appendWithin(appended, async (entries, writeEntries) => {
      const logged: [string, unknown][] = []
      for (const [key, entry] of entries) logged.push([key, await this.values.prepare(entry, slice, keyLists)])
      // One file is atomic by itself; more are journaled first (journal.ts), so that a stop between
      // them is finished at the next start instead of leaving half a change.
      const several = prepared.length + stamps.length + deleted.length + logged.length > 1
      const journaled =
        several && journal ? await journal.write({ set: [...prepared, ...stamps, ...logged], delete: deleted }) : null
      try {
        await Promise.all([
          ...prepared.map(([key, value]) => this.values.write(key, value)),
          ...deleted.map((key) => this.values.delete(key)),
        ])
        // Read before what they stamp: written once all of it has landed (TxWrites.stamps).
        await Promise.all(stamps.map(([key, value]) => this.values.write(key, value)))
        await writeEntries(logged)
      } catch (error) {
        // A failed write (a full disk) is answered now and leaves what was written, as without a
        // journal: its record must not be applied at the next start, over what was written since.
        if (journal && journaled) await journal.forget(journaled).catch(() => undefined)
        throw error
      }
      return journaled
    })
    if (journal && record) await journal.forget(record)
    if (notified !== null) this.signals.eventsAppended(notified)
    if (writes.announce !== undefined) this.signals.changed(writes.announce)
  }
}
