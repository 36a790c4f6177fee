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

  /**
   * Per log: the write of the entries that last took slots, done or not. Entries are written in
   * slot order across appends (each waits for the one before), so that a reader never finds a slot
   * filled after an empty one before it; a transaction's other files are written meanwhile.
   */
  private readonly writing = new Map<string, Promise<void>>()

  constructor(private readonly values: LocalValues) {}

  /**
   * Taken under the log's lock as entries take their slots: what to wait for before writing them
   * (the entries slotted before), and the call that lets the next ones be written.
   */
  private takeTurn(prefix: string): { before: Promise<void>; end: () => void } {
    const before = this.writing.get(prefix) ?? Promise.resolve()
    let end!: () => void
    const turn = new Promise<void>((resolve) => (end = resolve))
    this.writing.set(prefix, turn)
    void turn.then(() => {
      if (this.writing.get(prefix) === turn) this.writing.delete(prefix)
    })
    return { before, end }
  }

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
      const turn = this.takeTurn(prefix)
      try {
        // The entry ahead is written (a transaction's may still be on its way): its time is read.
        await turn.before
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
      } finally {
        turn.end()
      }
    })
  }

  /**
   * Appends `groups` (entries per log, dated now) as part of a transaction. Each entry takes its slot
   * under the logs' locks, which are released at once; `commit` then writes the transaction, handed
   * every entry's key and stored value, and `writeEntries`, which writes the entries (prepared by
   * the caller, in the same order) once those slotted before them are written. Transactions of one
   * log thus write their other files side by side, and only their entries one after another.
   */
  async appendWithin<R>(
    groups: [string, unknown[]][],
    commit: (entries: [string, unknown][], writeEntries: (stored: [string, unknown][]) => Promise<void>) => Promise<R>,
  ): Promise<R> {
    if (groups.length === 0) return commit([], async () => undefined)
    const now = Date.now()
    const { entries, turns } = await this.mutex.runExclusive(
      groups.map(([log]) => `log:${log}`),
      async () => {
        const entries: [string, unknown][] = []
        const turns: { before: Promise<void>; end: () => void; count: number }[] = []
        for (const [log, values] of groups) {
          const prefix = `log:${log}`
          const sequence = await this.sequence(prefix)
          turns.push({ ...this.takeTurn(prefix), count: values.length })
          for (const value of values)
            entries.push([`${prefix}:${pad(sequence.tail++)}`, { t: now, v: value } satisfies StoredLogEntry])
        }
        return { entries, turns }
      },
    )
    const writeEntries = async (stored: [string, unknown][]) => {
      let next = 0
      for (const turn of turns) {
        await turn.before
        for (const [key, value] of stored.slice(next, next + turn.count)) await this.values.write(key, value)
        next += turn.count
        turn.end()
      }
    }
    try {
      return await commit(entries, writeEntries)
    } finally {
      // A commit that failed before its entries leaves their slots empty; the entries after go on.
      for (const turn of turns) turn.end()
    }
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
