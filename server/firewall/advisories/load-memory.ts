import type { PackedIndexData, RecordFacts } from './packed-index'
import { U32List } from './packed-store'
import type { EntryHeader } from './zip-entries'

/**
 * What one load of a feed archive leaves for the next: per archive entry, the local header it had
 * (name, CRC-32, sizes) and what it produced (a record of the index, or that it was withdrawn, not
 * a record, or invalid and why). The next load passes over every entry whose header is unchanged
 * and takes that result instead of inflating and parsing the entry again: a refresh of 200,000
 * records where a few changed then costs the few. All of it lives in shared memory, so it travels
 * to the next loader thread with the index it describes and is copied nowhere.
 */
export interface LoadMemory {
  /** The index the load built; unchanged records are copied from its lines. */
  data: PackedIndexData
  facts: RecordFacts
  /** Entry names, UTF-8, back to back: entry i is names[nameEnd[i - 1] ?? 0 .. nameEnd[i]]. */
  names: Uint8Array
  nameEnd: Uint32Array
  crc32: Uint32Array
  compressedSize: Uint32Array
  size: Uint32Array
  /** The record number the entry produced (>= 0), or WITHDRAWN, NOT_RECORD or INVALID. */
  outcome: Int32Array
  /** Why each INVALID entry was skipped, by entry number (few). */
  reasons: Map<number, string>
}

export const WITHDRAWN = -1
export const NOT_RECORD = -2
export const INVALID = -3

/** The result an unchanged entry had, as the next load takes it. */
export type RememberedEntry =
  | {
      kind: 'record'
      /** Its record number in the previous index. */
      previous: number
      line: Uint8Array
      idHash: number
      keyHashes: Uint32Array
      ecosystems: number
    }
  | { kind: 'withdrawn' }
  | { kind: 'not-record' }
  | { kind: 'invalid'; reason: string }

/** Looks entries of a new archive up in the memory of the previous load. */
export class PreviousLoad {
  private readonly byName = new Map<string, number>()
  private readonly chunks: Buffer[]

  constructor(private readonly memory: LoadMemory) {
    const names = Buffer.from(memory.names.buffer, memory.names.byteOffset, memory.names.byteLength)
    let start = 0
    for (let i = 0; i < memory.nameEnd.length; i++) {
      this.byName.set(names.toString('utf8', start, memory.nameEnd[i]), i)
      start = memory.nameEnd[i]
    }
    this.chunks = memory.data.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))
  }

  /**
   * The number of the previous entry of that name when its header is the same (so, almost surely,
   * its bytes), else -1.
   */
  find(header: EntryHeader): number {
    const i = this.byName.get(header.name)
    if (i === undefined) return -1
    const m = this.memory
    const same =
      m.crc32[i] === header.crc32 && m.compressedSize[i] === header.compressedSize && m.size[i] === header.size
    return same ? i : -1
  }

  /** What entry `i` (from `find`) produced. */
  take(i: number): RememberedEntry {
    const outcome = this.memory.outcome[i]
    if (outcome === WITHDRAWN) return { kind: 'withdrawn' }
    if (outcome === NOT_RECORD) return { kind: 'not-record' }
    if (outcome === INVALID) return { kind: 'invalid', reason: this.memory.reasons.get(i) ?? 'invalid' }
    const { data, facts } = this.memory
    const start = data.startOf[outcome]
    const line = this.chunks[data.chunkOf[outcome]].subarray(start, start + data.lengthOf[outcome])
    const keyHashes = facts.keyHash.subarray(facts.keyStart[outcome], facts.keyStart[outcome + 1])
    const { idHash, ecosystems } = facts
    return {
      kind: 'record',
      previous: outcome,
      line,
      idHash: idHash[outcome],
      keyHashes,
      ecosystems: ecosystems[outcome],
    }
  }
}

/** Records, entry by entry in archive order, what a load makes of each; `finish` gives the memory. */
export class MemoryRecorder {
  private names = Buffer.alloc(64 * 1024)
  private used = 0
  private readonly nameEnd = new U32List()
  private readonly crc32 = new U32List()
  private readonly compressedSize = new U32List()
  private readonly size = new U32List()
  private readonly outcome = new U32List()
  private readonly reasons = new Map<number, string>()

  /**
   * An entry read (or reused) and its outcome. Entries with a data descriptor are not kept: their
   * local header does not identify them, so the next load reads them again anyway.
   */
  note(header: EntryHeader, outcome: number, reason?: string): void {
    if (header.descriptor) return
    const name = Buffer.from(header.name, 'utf8')
    if (this.used + name.length > this.names.length) {
      const next = Buffer.alloc(Math.max(this.names.length * 2, this.used + name.length))
      this.names.copy(next, 0, 0, this.used)
      this.names = next
    }
    name.copy(this.names, this.used)
    this.used += name.length
    if (reason !== undefined) this.reasons.set(this.nameEnd.length, reason)
    this.nameEnd.push(this.used)
    this.crc32.push(header.crc32)
    this.compressedSize.push(header.compressedSize)
    this.size.push(header.size)
    // Negative outcomes are stored as their 32-bit pattern and read back through an Int32Array.
    this.outcome.push(outcome >>> 0)
  }

  finish(data: PackedIndexData, facts: RecordFacts): LoadMemory {
    const names = new Uint8Array(new SharedArrayBuffer(this.used))
    names.set(this.names.subarray(0, this.used))
    const outcome = this.outcome.shared()
    return {
      data,
      facts,
      names,
      nameEnd: this.nameEnd.shared(),
      crc32: this.crc32.shared(),
      compressedSize: this.compressedSize.shared(),
      size: this.size.shared(),
      outcome: new Int32Array(outcome.buffer, outcome.byteOffset, outcome.length),
      reasons: this.reasons,
    }
  }
}
