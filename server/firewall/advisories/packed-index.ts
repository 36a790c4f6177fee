import type { Ecosystem } from '../schema'
import { normalizePackageName } from '../rules/names'
import { collectMatches } from './matches'
import { fromOsvEcosystem } from './ecosystems'
import type { Advisory, AdvisoryIndex, AdvisoryMatches } from './types'

/**
 * An advisory index for a whole feed (200,000 records) that keeps almost nothing on the JS heap:
 * each record is one line of JSON in large Buffers, and the package lookup is an open-addressing
 * hash table in typed arrays. A heap of 200,000 advisory objects made every major garbage
 * collection pause the process for 100-200 ms, so a feed swap slowed requests by as much; this
 * layout leaves the collector next to nothing to trace. A record is parsed when a lookup reaches it
 * (a small cache keeps the recently used ones).
 */

const CHUNK_BYTES = 1 << 20
const CACHE_RECORDS = 4096

/** FNV-1a over UTF-16 code units: fast, and collisions are checked against the record anyway. */
function hash32(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

const packageKey = (ecosystem: Ecosystem, name: string) => `${ecosystem}\u0000${normalizePackageName(ecosystem, name)}`

/** A growable list of 32-bit numbers. */
class U32List {
  data = new Uint32Array(1024)
  length = 0

  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2)
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = value
  }
}

/** Record lines in Buffers of 1 MiB (a longer record gets a Buffer of its own). */
class LineStore {
  readonly chunks: Buffer[] = []
  private current = Buffer.allocUnsafe(CHUNK_BYTES)
  private used = 0
  readonly chunkOf = new U32List()
  readonly startOf = new U32List()
  readonly lengthOf = new U32List()

  get count(): number {
    return this.startOf.length
  }

  /** Appends one line; returns its record number. */
  append(text: string): number {
    const length = Buffer.byteLength(text)
    if (length > CHUNK_BYTES - this.used) {
      this.seal()
      if (length > CHUNK_BYTES) this.current = Buffer.allocUnsafe(length)
    }
    this.current.write(text, this.used, 'utf8')
    this.chunkOf.push(this.chunks.length)
    this.startOf.push(this.used)
    this.lengthOf.push(length)
    this.used += length
    return this.count - 1
  }

  private seal(): void {
    if (this.used > 0) this.chunks.push(this.current.subarray(0, this.used))
    this.current = Buffer.allocUnsafe(CHUNK_BYTES)
    this.used = 0
  }

  /** The bytes of record `r`. */
  line(r: number): Buffer {
    const chunk = this.chunkOf.data[r]
    const buffer = chunk < this.chunks.length ? this.chunks[chunk] : this.current
    const start = this.startOf.data[r]
    return buffer.subarray(start, start + this.lengthOf.data[r])
  }

  finish(): void {
    this.seal()
  }
}

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
 * Builds a `PackedAdvisoryIndex` one advisory at a time; readers keep the previous index until
 * `finish`. A later advisory with an id already held is ignored.
 * @example const builder = new PackedIndexBuilder(); builder.add(advisory); const index = builder.finish()
 */
export class PackedIndexBuilder {
  private readonly store = new LineStore()
  private readonly pairHash = new U32List()
  private readonly pairRecord = new U32List()
  /** id hash -> record number(s): numbers only, nothing for the collector to trace. */
  private readonly ids = new Map<number, number | number[]>()
  private readonly perEcosystem = new Map<Ecosystem, number>()

  get size(): number {
    return this.store.count
  }

  /** Adds one advisory (`json`: its serialised form when the caller has it); false for a known id. */
  add(advisory: Advisory, json?: string): boolean {
    const idHash = hash32(advisory.id)
    const known = this.ids.get(idHash)
    const same = known === undefined ? [] : typeof known === 'number' ? [known] : known
    if (same.some((r) => (JSON.parse(this.store.line(r).toString('utf8')) as Advisory).id === advisory.id)) return false
    const r = this.store.append(json ?? JSON.stringify(advisory))
    this.ids.set(idHash, same.length === 0 ? r : [...same, r])
    const keys = new Set<string>()
    const ecosystems = new Set<Ecosystem>()
    for (const affected of advisory.affected) {
      const ecosystem = fromOsvEcosystem(affected.ecosystem)
      if (!ecosystem) continue
      keys.add(packageKey(ecosystem, affected.name))
      ecosystems.add(ecosystem)
    }
    for (const ecosystem of ecosystems) this.perEcosystem.set(ecosystem, (this.perEcosystem.get(ecosystem) ?? 0) + 1)
    for (const key of keys) {
      this.pairHash.push(hash32(key))
      this.pairRecord.push(r)
    }
    return true
  }

  /** The finished index as plain buffers and numbers, which a worker thread can transfer. */
  finishData(): PackedIndexData {
    const { store, pairHash, pairRecord } = this
    store.finish()
    let capacity = 16
    while (capacity < pairHash.length * 2) capacity *= 2
    const mask = capacity - 1
    // slots hold record + 1 (0 = empty); linear probing keeps one package's records in insertion order.
    const slots = new Uint32Array(capacity)
    const slotHash = new Uint32Array(capacity)
    for (let i = 0; i < pairHash.length; i++) {
      let slot = pairHash.data[i] & mask
      while (slots[slot] !== 0) slot = (slot + 1) & mask
      slots[slot] = pairRecord.data[i] + 1
      slotHash[slot] = pairHash.data[i]
    }
    const n = store.count
    return {
      chunks: store.chunks.map((chunk) => new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
      chunkOf: store.chunkOf.data.slice(0, n),
      startOf: store.startOf.data.slice(0, n),
      lengthOf: store.lengthOf.data.slice(0, n),
      slots,
      slotHash,
      perEcosystem: Object.fromEntries(this.perEcosystem),
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

/** Every ArrayBuffer of the data, to transfer rather than copy it to another thread. */
export function packedIndexTransferList(data: PackedIndexData): ArrayBuffer[] {
  const views: ArrayBufferView[] = [
    ...data.chunks,
    data.chunkOf,
    data.startOf,
    data.lengthOf,
    data.slots,
    data.slotHash,
  ]
  return [...new Set(views.map((view) => view.buffer as ArrayBuffer))]
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
