import type { PackedIndexData, RecordFacts, StoredLine } from './packed-index'
import type { SnapshotMemory } from './snapshot-blocks'
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
  /** The compressed blocks of the snapshot stored for this load: a refresh reuses the unchanged ones. */
  snapshot?: SnapshotMemory
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
      /** Where its line lies in the previous index: chunk number, the chunk, offset and length. */
      line: StoredLine
      idHash: number
      keyHashes: Uint32Array
      ecosystems: number
    }
  | { kind: 'withdrawn' }
  | { kind: 'not-record' }
  | { kind: 'invalid'; reason: string }

/**
 * An entry's header as the memory keeps it; the name as its UTF-8 bytes (`start` to `end` of
 * `bytes`) so that a directory of 200,000 entries is compared without a string per entry.
 */
export interface NotedEntry {
  name: Uint8Array
  start: number
  end: number
  crc32: number
  compressedSize: number
  size: number
  descriptor: boolean
}

/** A local header in the form the memory keeps. */
export function notedOf(header: EntryHeader): NotedEntry {
  const name = Buffer.from(header.name, 'utf8')
  return { ...header, name, start: 0, end: name.length }
}

/** FNV-1a over bytes. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193)
  return hash >>> 0
}

/**
 * Whether a new index may take unchanged lines where `data` keeps them (its chunks shared, not
 * copied): not once a quarter of those chunks' bytes are lines no record uses any more (removed or
 * changed since), so the load that follows copies them and leaves the waste behind.
 */
export function sharesLinesOf(data: PackedIndexData): boolean {
  const held = data.chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const used = data.lengthOf.reduce((sum, length) => sum + length, 0)
  return held - used <= held / 4
}

/** Looks entries of a new archive up in the memory of the previous load. */
export class PreviousLoad {
  /** Open addressing by name hash: entry number + 1, 0 for empty; typed, so nothing for the GC to trace. */
  private readonly slots: Uint32Array
  private readonly chunks: Buffer[]
  /** Whether the new index may share the previous one's chunks (`sharesLinesOf`). */
  readonly sharesLines: boolean

  constructor(private readonly memory: LoadMemory) {
    const count = memory.nameEnd.length
    let size = 1024
    while (size < count * 2) size *= 2
    this.slots = new Uint32Array(size)
    for (let i = 0; i < count; i++) {
      let slot = hashBytes(memory.names, this.nameStart(i), memory.nameEnd[i]) & (size - 1)
      while (this.slots[slot] !== 0) slot = (slot + 1) & (size - 1)
      this.slots[slot] = i + 1
    }
    this.chunks = memory.data.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))
    this.sharesLines = sharesLinesOf(memory.data)
  }

  private nameStart(i: number): number {
    return i === 0 ? 0 : this.memory.nameEnd[i - 1]
  }

  private sameName(i: number, entry: NotedEntry): boolean {
    const names = this.memory.names
    const start = this.nameStart(i)
    if (this.memory.nameEnd[i] - start !== entry.end - entry.start) return false
    for (let k = 0; k < entry.end - entry.start; k++) if (names[start + k] !== entry.name[entry.start + k]) return false
    return true
  }

  /**
   * The number of the previous entry of that name when its header is the same (so, almost surely,
   * its bytes), else -1.
   */
  find(entry: NotedEntry): number {
    const mask = this.slots.length - 1
    for (let slot = hashBytes(entry.name, entry.start, entry.end) & mask; ; slot = (slot + 1) & mask) {
      const i = this.slots[slot] - 1
      if (i < 0) return -1
      if (!this.sameName(i, entry)) continue
      const m = this.memory
      const same =
        m.crc32[i] === entry.crc32 && m.compressedSize[i] === entry.compressedSize && m.size[i] === entry.size
      return same ? i : -1
    }
  }

  /** What entry `i` (from `find`) produced. */
  take(i: number): RememberedEntry {
    const outcome = this.memory.outcome[i]
    if (outcome === WITHDRAWN) return { kind: 'withdrawn' }
    if (outcome === NOT_RECORD) return { kind: 'not-record' }
    if (outcome === INVALID) return { kind: 'invalid', reason: this.memory.reasons.get(i) ?? 'invalid' }
    const { data, facts } = this.memory
    const from = data.chunkOf[outcome]
    const line = { from, chunk: this.chunks[from], start: data.startOf[outcome], length: data.lengthOf[outcome] }
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
  note(entry: NotedEntry, outcome: number, reason?: string): void {
    if (entry.descriptor) return
    const length = entry.end - entry.start
    if (this.used + length > this.names.length) {
      const next = Buffer.alloc(Math.max(this.names.length * 2, this.used + length))
      this.names.copy(next, 0, 0, this.used)
      this.names = next
    }
    this.names.set(entry.name.subarray(entry.start, entry.end), this.used)
    this.used += length
    if (reason !== undefined) this.reasons.set(this.nameEnd.length, reason)
    this.nameEnd.push(this.used)
    this.crc32.push(entry.crc32)
    this.compressedSize.push(entry.compressedSize)
    this.size.push(entry.size)
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
