import type { LocalValues } from './values'

/** What a transaction writes, as the driver is handed it: values already serialised (see `LocalValues.prepare`). */
export interface JournalRecord {
  /** Keys and their values, in the order they are to be written. */
  set: [string, unknown][]
  delete: string[]
}

/** The prefix of journal keys (`journal:<pid>:<start>-<seq>`); no other key starts with it. */
export const JOURNAL_PREFIX = 'journal'

/** A record as read back: when it was written (ms), and each value with the text it is stored as. */
interface ReadRecord {
  at: number
  set: [key: string, value: unknown, text: string][]
  delete: string[]
}

/**
 * The record as text: a JSON header (the time, each key with its value's kind and length), a
 * newline, then the values one after another. A value is a large JSON text (a 1 MiB firewall):
 * written once as it is, not escaped again inside one JSON document.
 */
function encode(record: JournalRecord, at: number): string {
  const texts = record.set.map(([, value]) => (typeof value === 'string' ? value : JSON.stringify(value)))
  const header = {
    at,
    s: record.set.map(([key, value], index) => [key, typeof value === 'string' ? 's' : 'j', texts[index].length]),
    d: record.delete,
  }
  return `${JSON.stringify(header)}\n${texts.join('')}`
}

/** The record `encode` wrote, or null when the text is not one (a write cut short: nothing was applied after it). */
function decode(text: string): ReadRecord | null {
  const newline = text.indexOf('\n')
  if (newline < 0) return null
  let header: { at: number; s: [string, 's' | 'j', number][]; d: string[] }
  try {
    header = JSON.parse(text.slice(0, newline))
  } catch {
    return null
  }
  if (typeof header?.at !== 'number' || !Array.isArray(header.s) || !Array.isArray(header.d)) return null
  const set: ReadRecord['set'] = []
  let at = newline + 1
  for (const [key, kind, length] of header.s) {
    const piece = text.slice(at, at + length)
    if (piece.length !== length) return null
    set.push([key, kind === 's' ? piece : JSON.parse(piece), piece])
    at += length
  }
  return at === text.length ? { at: header.at, set, delete: header.d } : null
}

/** Whether the process `pid` is running (a process we may not signal is running too). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The write-ahead journal of the local backend's transactions. A transaction of several keys is
 * several files: without it, a process that stops between two of them (killed, out of memory, a
 * full disk) leaves a firewall without its history entry, or a change without its event, which a
 * webhook then never delivers. Each such transaction is journaled whole (one atomic file) before
 * its first write and forgotten after its last; a record left behind is applied again when the
 * storage is next opened (`recover`). Applying one is idempotent: it names every key it writes,
 * log entries included (their slots are chosen before the record is written).
 */
export class TransactionJournal {
  private sequence = 0
  /** Tells this process's records apart from those of an earlier process with the same id (a container's pid 1). */
  private readonly prefix = `${JOURNAL_PREFIX}:${process.pid}:${Date.now().toString(36)}`

  constructor(private readonly values: LocalValues) {}

  /** Journals `record` before any of it is written; pass the key returned to `forget` once all of it is. */
  async write(record: JournalRecord): Promise<string> {
    const key = `${this.prefix}-${(this.sequence++).toString(36).padStart(8, '0')}`
    await this.values.setBytes(key, Buffer.from(encode(record, Date.now())))
    return key
  }

  forget(key: string): Promise<void> {
    return this.values.delete(key)
  }

  /**
   * Applies again every record a stopped process left, oldest first, and forgets it. A record of a
   * process still running (the service, while the admin CLI opens the same directory) is its own
   * transaction in flight: left to it. A key changed after the record was written (a process that
   * did not finish it wrote there since) keeps what it holds: the record never undoes a later
   * change. Call before this process writes anything. Returns how many records were applied.
   */
  async recover(): Promise<number> {
    const keys = (await this.values.keys(JOURNAL_PREFIX)).sort()
    let applied = 0
    for (const key of keys) {
      const pid = Number(key.split(':')[1])
      if (pid !== process.pid && Number.isInteger(pid) && pid > 0 && running(pid)) continue
      const record = decode((await this.values.getBytes(key))?.toString('utf8') ?? '')
      if (record) {
        for (const [target, value, stored] of record.set) {
          const current = (await this.values.getBytes(target))?.toString('utf8') ?? null
          if (current === stored || (current !== null && (await this.changedSince(target, record.at)))) continue
          await this.values.write(target, value)
        }
        for (const target of record.delete) {
          if (await this.changedSince(target, record.at)) continue
          await this.values.delete(target)
        }
        applied++
      }
      await this.values.delete(key)
    }
    return applied
  }

  /** Whether `key` was written after `at` (ms): its file is newer (a driver without times: never). */
  private async changedSince(key: string, at: number): Promise<boolean> {
    const { mtime } = await this.values.storage.getMeta(key)
    return mtime instanceof Date && mtime.getTime() > at
  }
}
