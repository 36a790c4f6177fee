import { ECOSYSTEMS, type Ecosystem } from '../firewall/schema'
import { normalizePackageName } from '../firewall/rules/names'
import { collectMatches } from './matches'
import { fromOsvEcosystem } from './ecosystems'
import { hash32, LineStore, U32List } from './packed-store'
import type { Advisory, AdvisoryIndex, AdvisoryMatches } from './types'

/**
 * An advisory index for a whole feed (200,000 records) that keeps almost nothing on the JS heap:
 * each record is one line of JSON in large Buffers, and the package lookup is an open-addressing
 * hash table in typed arrays. A heap of 200,000 advisory objects made every major garbage
 * collection pause the process for 100-200 ms, so a feed swap slowed requests by as much; this
 * layout leaves the collector next to nothing to trace. A record is parsed when a lookup reaches it
 * (a small cache keeps the recently used ones).
 */

const CACHE_RECORDS = 4096

const packageKey = (ecosystem: Ecosystem, name: string) => `${ecosystem}\u0000${normalizePackageName(ecosystem, name)}`

/** An index that can also hand out its records as stored (for snapshots, without re-serialising). */
export interface PackedAdvisoryIndex extends AdvisoryIndex {
  count(ecosystem: Ecosystem): number
  /** The packed form, to hand to another thread. */
  readonly data: PackedIndexData
  lines(): Iterable<Uint8Array>
  /** Bytes held outside the JS heap. */
  readonly bytes: number
}

/**
 * What the index derives from a record besides its line, per record number: kept by a feed load so
 * that the next one can add an unchanged record by its stored line, without parsing it.
 */
export interface RecordFacts {
  idHash: Uint32Array
  /** Bit i set: the record names a package of ECOSYSTEMS[i]. */
  ecosystems: Uint32Array
  /** The record's package key hashes are keyHash[keyStart[r]] up to keyHash[keyStart[r + 1]]. */
  keyStart: Uint32Array
  keyHash: Uint32Array
}

/** A line where an earlier index keeps it: its chunk (number `from` there), offset and length. */
export interface StoredLine {
  from: number
  chunk: Buffer
  start: number
  length: number
}

const bytesOf = (line: StoredLine) => line.chunk.subarray(line.start, line.start + line.length)

/**
 * Builds a `PackedAdvisoryIndex` one advisory at a time; readers keep the previous index until
 * `finish`. A later advisory with an id already held is ignored.
 * @example const builder = new PackedIndexBuilder(); builder.add(advisory); const index = builder.finish()
 */
export class PackedIndexBuilder {
  private readonly store = new LineStore()
  private readonly pairHash = new U32List()
  private readonly pairRecord = new U32List()
  private readonly keyStart = new U32List()
  private readonly idHashes = new U32List()
  private readonly masks = new U32List()
  /** id hash (as int32, which V8 hashes as a small integer) -> record number(s): nothing for the GC to trace. */
  private readonly ids = new Map<number, number | number[]>()
  /** Records per ECOSYSTEMS[i]. */
  private readonly perEcosystem = new Uint32Array(ECOSYSTEMS.length)

  get size(): number {
    return this.store.count
  }

  /** Adds one advisory (`json`: its serialised form when the caller has it); false for a known id. */
  add(advisory: Advisory, json?: string): boolean {
    const keys = new Set<string>()
    let mask = 0
    for (const affected of advisory.affected) {
      const ecosystem = fromOsvEcosystem(affected.ecosystem)
      if (!ecosystem) continue
      keys.add(packageKey(ecosystem, affected.name))
      mask |= 1 << ECOSYSTEMS.indexOf(ecosystem)
    }
    const hashes = Array.from(keys, hash32)
    return this.insert(json ?? JSON.stringify(advisory), hash32(advisory.id), hashes, mask, advisory.id)
  }

  /**
   * Adds a record by its stored line and facts (from an earlier build), so the index holds the same
   * bytes a build from the parsed record would: the line stays in the earlier index's chunk when
   * `share`, else it is copied.
   */
  addLine(line: StoredLine, idHash: number, keyHashes: ArrayLike<number>, ecosystems: number, share: boolean): boolean {
    return this.insert(share ? line : bytesOf(line), idHash, keyHashes, ecosystems)
  }

  private insert(
    line: string | Uint8Array | StoredLine,
    idHash: number,
    keys: ArrayLike<number>,
    mask: number,
    id?: string,
  ) {
    const known = this.ids.get(idHash | 0)
    const same = known === undefined ? [] : typeof known === 'number' ? [known] : known
    if (same.length > 0) {
      const text =
        typeof line === 'string'
          ? line
          : Buffer.from(line instanceof Uint8Array ? line : bytesOf(line)).toString('utf8')
      const own = id ?? (JSON.parse(text) as Advisory).id
      if (same.some((r) => (JSON.parse(this.store.line(r).toString('utf8')) as Advisory).id === own)) return false
    }
    const r =
      typeof line === 'string' || line instanceof Uint8Array
        ? this.store.append(line)
        : this.store.appendStored(line.from, line.chunk, line.start, line.length)
    this.ids.set(idHash | 0, same.length === 0 ? r : [...same, r])
    this.idHashes.push(idHash)
    this.masks.push(mask)
    this.keyStart.push(this.pairHash.length)
    for (let bit = 0; mask >> bit !== 0; bit++) if (mask & (1 << bit)) this.perEcosystem[bit]++
    for (let k = 0; k < keys.length; k++) {
      this.pairHash.push(keys[k])
      this.pairRecord.push(r)
    }
    return true
  }

  /** The facts of every record added, for the next build to reuse (after `finishData`). */
  facts(): RecordFacts {
    const keyStart = new U32List()
    for (let r = 0; r < this.keyStart.length; r++) keyStart.push(this.keyStart.data[r])
    keyStart.push(this.pairHash.length)
    return {
      idHash: this.idHashes.shared(),
      ecosystems: this.masks.shared(),
      keyStart: keyStart.shared(),
      keyHash: this.pairHash.shared(),
    }
  }

  /** The finished index as plain buffers and numbers, shared with (not copied to) other threads. */
  finishData(): PackedIndexData {
    const { store, pairHash, pairRecord } = this
    store.finish()
    let capacity = 16
    while (capacity < pairHash.length * 2) capacity *= 2
    const mask = capacity - 1
    // slots hold record + 1 (0 = empty); linear probing keeps one package's records in insertion order.
    const slots = new Uint32Array(new SharedArrayBuffer(capacity * 4))
    const slotHash = new Uint32Array(new SharedArrayBuffer(capacity * 4))
    for (let i = 0; i < pairHash.length; i++) {
      let slot = pairHash.data[i] & mask
      while (slots[slot] !== 0) slot = (slot + 1) & mask
      slots[slot] = pairRecord.data[i] + 1
      slotHash[slot] = pairHash.data[i]
    }
    return {
      chunks: store.chunks.map((chunk) => new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
      chunkOf: store.chunkOf.shared(),
      startOf: store.startOf.shared(),
      lengthOf: store.lengthOf.shared(),
      slots,
      slotHash,
      perEcosystem: Object.fromEntries(
        ECOSYSTEMS.map((ecosystem, bit) => [ecosystem, this.perEcosystem[bit]]).filter(([, count]) => count !== 0),
      ),
    }
  }

  finish(): PackedAdvisoryIndex {
    return packedIndexFromData(this.finishData())
  }
}

/** A finished packed index as data: Buffers' bytes and typed arrays (transferable between threads). */
export interface PackedIndexData {
  chunks: Uint8Array[]
  chunkOf: Uint32Array
  startOf: Uint32Array
  lengthOf: Uint32Array
  slots: Uint32Array
  slotHash: Uint32Array
  perEcosystem: Partial<Record<Ecosystem, number>>
}

/**
 * The index over packed data (built here or in a worker thread). Lookups parse the records they
 * reach; a small cache keeps the recently used ones.
 */
export function packedIndexFromData(data: PackedIndexData): PackedAdvisoryIndex {
  const chunks = data.chunks.map((bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  const { chunkOf, startOf, lengthOf, slots, slotHash } = data
  const mask = slots.length - 1
  const size = startOf.length
  const line = (r: number) => chunks[chunkOf[r]].subarray(startOf[r], startOf[r] + lengthOf[r])
  const parse = (r: number) => JSON.parse(line(r).toString('utf8')) as Advisory
  const cache = new Map<number, Advisory>()
  const record = (r: number): Advisory => {
    const hit = cache.get(r)
    if (hit) {
      cache.delete(r)
      cache.set(r, hit)
      return hit
    }
    const advisory = parse(r)
    cache.set(r, advisory)
    if (cache.size > CACHE_RECORDS) cache.delete(cache.keys().next().value!)
    return advisory
  }
  const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0) + slots.byteLength * 2
  return {
    size,
    bytes,
    data,
    count: (ecosystem) => data.perEcosystem[ecosystem] ?? 0,
    *all() {
      for (let r = 0; r < size; r++) yield parse(r)
    },
    *lines() {
      for (let r = 0; r < size; r++) yield line(r)
    },
    lookup(ecosystem, name, version): AdvisoryMatches {
      const hash = hash32(packageKey(ecosystem, name))
      const candidates: Advisory[] = []
      for (let slot = hash & mask; slots[slot] !== 0; slot = (slot + 1) & mask) {
        if (slotHash[slot] === hash) candidates.push(record(slots[slot] - 1))
      }
      return collectMatches(candidates, ecosystem, name, version)
    },
  }
}
