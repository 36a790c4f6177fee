import type { LogEntry, LogRangeOptions } from '../backend'
import { KeyedMutex } from '../keyed-mutex'
import type { LogStore } from '../ports'
import type { LocalValues } from './values'

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
 * Logs of one process: one key per entry (`log:<name>:<slot>`), so an append writes one small
 * file and a crash loses nothing that was acknowledged; the first and next slot are kept in memory.
 */
export class LocalLogs implements LogStore {
  private readonly mutex = new KeyedMutex()
  private readonly sequences = new Map<string, Promise<Sequence>>()

  constructor(private readonly values: LocalValues) {}

  /** Forgets the slots known of every log (a key was moved under them). */
  forgetPositions(): void {
    this.sequences.clear()
  }

  private sequence(prefix: string): Promise<Sequence> {
    let sequence = this.sequences.get(prefix)
    if (!sequence) {
      sequence = this.values.storage.getKeys(prefix).then((keys) => {
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

  append(log: string, entries: unknown[]): Promise<string[]> {
    const now = Date.now()
    return this.appendDated(
      log,
      entries.map((value) => ({ time: now, value })),
      false,
    )
  }

  appendAt(log: string, entries: { time: number; value: unknown }[]): Promise<string[]> {
    return this.appendDated(log, entries, true)
  }

  /** `keepOrder`: no entry dated before the one written ahead of it (what `appendAt` promises). */
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
        floor = (await this.values.get<StoredLogEntry>(`${prefix}:${pad(sequence.tail - 1)}`))?.t ?? 0
      const cursors: string[] = []
      for (const { time, value } of entries) {
        const slot = sequence.tail++
        floor = keepOrder ? Math.max(floor, time) : time
        await this.values.set(`${prefix}:${pad(slot)}`, { t: floor, v: value } satisfies StoredLogEntry)
        cursors.push(pad(slot))
      }
      return cursors
    })
  }

  /**
   * Appends `groups` (entries per log, dated now) as part of a transaction: under every log's lock,
   * each entry gets its slot, then `commit` writes them with the rest of the transaction (it is
   * handed every entry's key and stored value, in slot order per log: it must write a log's entries
   * in that order, so that a reader never sees a slot filled after an empty one before it).
   */
  appendWithin(groups: [string, unknown[]][], commit: (entries: [string, unknown][]) => Promise<void>): Promise<void> {
    if (groups.length === 0) return commit([])
    const now = Date.now()
    return this.mutex.runExclusive(
      groups.map(([log]) => `log:${log}`),
      async () => {
        const entries: [string, unknown][] = []
        for (const [log, values] of groups) {
          const prefix = `log:${log}`
          const sequence = await this.sequence(prefix)
          for (const value of values)
            entries.push([`${prefix}:${pad(sequence.tail++)}`, { t: now, v: value } satisfies StoredLogEntry])
        }
        await commit(entries)
      },
    )
  }

  async range<T>(log: string, options: LogRangeOptions): Promise<LogEntry<T>[]> {
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
    const stored = await this.values.getMany<StoredLogEntry>(slots.map((slot) => `${prefix}:${pad(slot)}`))
    return stored.flatMap((entry, index) =>
      entry ? [{ cursor: pad(slots[index]), time: entry.t, value: entry.v as T }] : [],
    )
  }

  async trimBefore(log: string, beforeMs: number): Promise<number> {
    const prefix = `log:${log}`
    return this.mutex.runExclusive([prefix], async () => {
      const sequence = await this.sequence(prefix)
      let removed = 0
      while (sequence.head < sequence.tail) {
        const key = `${prefix}:${pad(sequence.head)}`
        const entry = await this.values.get<StoredLogEntry>(key)
        if (entry && entry.t >= beforeMs) break
        await this.values.delete(key)
        sequence.head++
        removed++
      }
      return removed
    })
  }

  async length(log: string): Promise<number> {
    const sequence = await this.sequence(`log:${log}`)
    return sequence.tail - sequence.head
  }
}
