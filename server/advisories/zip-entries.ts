import { zip64Values } from './zip64'

/**
 * The local-file layer of a zip archive (APPNOTE 4.3.7), read from a byte stream: each entry's
 * header, then its compressed bytes, handed out whole. Sizes come from the local header (OSV's
 * archives carry them) or, for entries written with a data descriptor, from the descriptor found
 * after the data (its signature, and a compressed size equal to the bytes seen, mark the end).
 * The central directory is where entries end; it is not read.
 */

const LOCAL_HEADER = 0x04034b50
const CENTRAL_HEADER = 0x02014b50
const END_RECORD = 0x06054b50
const END_RECORD_64 = 0x06064b50
const DESCRIPTOR = 0x08074b50
const DESCRIPTOR_BYTES = Buffer.from([0x50, 0x4b, 0x07, 0x08])
const FLAG_DESCRIPTOR = 0x0008
const FLAG_UTF8 = 0x0800
const MAX32 = 0xffffffff

/** What an entry's local header says: enough to tell an entry unchanged since an earlier archive. */
export interface EntryHeader {
  name: string
  crc32: number
  compressedSize: number
  size: number
  /** Written with a data descriptor: the CRC and sizes above may be zeros, not the entry's own. */
  descriptor: boolean
}

/** One entry's compressed bytes (null when over the size limit, or passed over at the caller's wish). */
export interface RawEntry {
  header: EntryHeader
  /** 0 stored, 8 deflate, ... */
  method: number
  compressed: Buffer | null
  compressedSize: number
  /** Passed over unread because the caller's `skip` asked so. */
  skipped: boolean
}

/** The stream is not a zip archive, or its entries are out of step: nothing after this can be read. */
class ZipFormatError extends Error {}

/** Bytes received and not read yet; copied only when a piece spans two chunks. */
class ByteQueue {
  private chunks: Buffer[] = []
  length = 0

  push(chunk: Buffer): void {
    if (chunk.length === 0) return
    this.chunks.push(chunk)
    this.length += chunk.length
  }

  peek(n: number): Buffer {
    const first = this.chunks[0]
    return first.length >= n ? first.subarray(0, n) : Buffer.concat(this.chunks, n)
  }

  take(n: number): Buffer {
    const bytes = this.peek(n)
    this.skip(n)
    return bytes
  }

  skip(n: number): void {
    this.length -= n
    while (n > 0) {
      const first = this.chunks[0]
      if (first.length > n) {
        this.chunks[0] = first.subarray(n)
        return
      }
      n -= first.length
      this.chunks.shift()
    }
  }
}

interface Header {
  entry: EntryHeader
  method: number
  descriptor: boolean
  zip64: boolean
  compressedSize: number
  skipped: boolean
}

type State =
  | { kind: 'header' }
  | { kind: 'data'; header: Header; left: number; parts: Buffer[] | null }
  | { kind: 'scan'; header: Header; seen: number; parts: Buffer[] | null }
  | { kind: 'descriptor'; zip64: boolean }
  | { kind: 'end' }

/**
 * Splits a zip byte stream into entries: `push` the bytes as they come, get back the entries they
 * complete; `done` says whether the archive's entries ended (its central directory began).
 * Entries larger than `maxEntryBytes` compressed are passed over and handed out without bytes, as
 * are those `skip` picks from their local header (a caller that still holds what they produced).
 * @example const reader = new ZipEntryReader(4 << 20); for (const e of reader.push(chunk)) inflate(e)
 */
export class ZipEntryReader {
  private readonly queue = new ByteQueue()
  private state: State = { kind: 'header' }
  private offset = 0

  constructor(
    private readonly maxEntryBytes: number,
    private readonly skip: (header: EntryHeader) => boolean = () => false,
  ) {}

  get done(): boolean {
    return this.state.kind === 'end'
  }

  /** Throws `ZipFormatError` when the bytes are not where a zip has its next piece. */
  push(chunk: Buffer): RawEntry[] {
    if (this.state.kind === 'end') return []
    this.queue.push(chunk)
    const out: RawEntry[] = []
    while (this.step(out));
    return out
  }

  private consume(n: number): Buffer {
    this.offset += n
    return this.queue.take(n)
  }

  private pass(n: number): void {
    this.offset += n
    this.queue.skip(n)
  }

  /** One step of the state machine; false when it needs more bytes. */
  private step(out: RawEntry[]): boolean {
    const state = this.state
    const queue = this.queue
    switch (state.kind) {
      case 'end':
        return false
      case 'header': {
        if (queue.length < 4) return false
        const signature = queue.peek(4).readUInt32LE(0)
        if (signature === CENTRAL_HEADER || signature === END_RECORD || signature === END_RECORD_64) {
          this.state = { kind: 'end' }
          return false
        }
        if (signature !== LOCAL_HEADER) throw new ZipFormatError(`no zip entry header at byte ${this.offset}`)
        if (queue.length < 30) return false
        const fixed = queue.peek(30)
        const nameLength = fixed.readUInt16LE(26)
        const extraLength = fixed.readUInt16LE(28)
        if (queue.length < 30 + nameLength + extraLength) return false
        const bytes = this.consume(30 + nameLength + extraLength)
        const flags = bytes.readUInt16LE(6)
        const nameBytes = bytes.subarray(30, 30 + nameLength)
        const name = nameBytes.toString(flags & FLAG_UTF8 ? 'utf8' : 'latin1')
        let compressedSize = bytes.readUInt32LE(18)
        let size = bytes.readUInt32LE(22)
        const zip64 = compressedSize === MAX32 || size === MAX32
        if (zip64) {
          const wanted = { size: size === MAX32, compressedSize: compressedSize === MAX32 }
          const wide = zip64Values(bytes.subarray(30 + nameLength), wanted, (message) => new ZipFormatError(message))
          size = wide.size ?? size
          compressedSize = wide.compressedSize ?? compressedSize
        }
        const descriptor = !!(flags & FLAG_DESCRIPTOR)
        const entry: EntryHeader = { name, crc32: bytes.readUInt32LE(14), compressedSize, size, descriptor }
        // An entry with a data descriptor is always read: its header need not carry its CRC and sizes.
        const skipped = !descriptor && this.skip(entry)
        const header: Header = { entry, method: bytes.readUInt16LE(8), descriptor, zip64, compressedSize, skipped }
        const parts = !skipped && compressedSize <= this.maxEntryBytes ? [] : null
        // With a data descriptor the header's sizes are usually zero: the end is found by scanning.
        if (header.descriptor && compressedSize === 0) this.state = { kind: 'scan', header, seen: 0, parts: [] }
        else this.state = { kind: 'data', header, left: compressedSize, parts }
        return true
      }
      case 'data': {
        if (state.left > 0) {
          if (queue.length === 0) return false
          const n = Math.min(state.left, queue.length)
          state.left -= n
          // Bytes nobody reads are dropped without being copied together.
          if (state.parts) state.parts.push(this.consume(n))
          else this.pass(n)
          if (state.left > 0) return false
        }
        this.finish(out, state.header, state.parts, state.header.compressedSize)
        this.state = state.header.descriptor ? { kind: 'descriptor', zip64: state.header.zip64 } : { kind: 'header' }
        return true
      }
      case 'descriptor': {
        if (queue.length < 4) return false
        const signed = queue.peek(4).readUInt32LE(0) === DESCRIPTOR
        const length = (signed ? 4 : 0) + (state.zip64 ? 20 : 12)
        if (queue.length < length) return false
        this.consume(length)
        this.state = { kind: 'header' }
        return true
      }
      case 'scan':
        return this.scan(out, state)
    }
  }

  /**
   * Looks for the data descriptor that ends an entry of unknown size: its signature followed by
   * a compressed size equal to the bytes before it (32-bit, or 64-bit for zip64).
   */
  private scan(out: RawEntry[], state: Extract<State, { kind: 'scan' }>): boolean {
    const queue = this.queue
    if (queue.length < 4) return false
    const bytes = queue.peek(queue.length)
    for (let at = bytes.indexOf(DESCRIPTOR_BYTES); at >= 0; at = bytes.indexOf(DESCRIPTOR_BYTES, at + 1)) {
      if (at + 24 > bytes.length) break
      const size = state.seen + at
      const small = bytes.readUInt32LE(at + 8) === size % 2 ** 32
      const large = Number(bytes.readBigUInt64LE(at + 8)) === size
      if (!small && !large) continue
      // A 32-bit match wins unless the 64-bit reading matches too (a zip64 entry then).
      const length = large && !small ? 24 : large && state.header.zip64 ? 24 : 16
      const data = this.consume(at)
      state.parts?.push(data)
      this.consume(length)
      this.finish(out, state.header, state.parts, size)
      this.state = { kind: 'header' }
      return true
    }
    // Keep what may be the start of a descriptor that is not complete yet.
    const keep = Math.min(bytes.length, 23)
    const piece = this.consume(bytes.length - keep)
    state.seen += piece.length
    if (state.parts) {
      state.parts.push(piece)
      if (state.seen > this.maxEntryBytes) state.parts = null
    }
    return false
  }

  private finish(out: RawEntry[], header: Header, parts: Buffer[] | null, compressedSize: number): void {
    const compressed = parts === null ? null : parts.length === 1 ? parts[0] : Buffer.concat(parts)
    const { entry, method, skipped } = header
    out.push({ header: entry, method, compressed, compressedSize, skipped })
  }
}
