/**
 * The storage pieces of the packed advisory index: record lines in large Buffers and growable
 * lists of numbers. Finished pieces live in SharedArrayBuffers: the index is handed from the loader
 * thread to the request thread, and back to the next loader thread (which copies the records that
 * did not change) without a copy of its 60-odd MB on the request thread.
 */

const CHUNK_BYTES = 1 << 20

/** FNV-1a over UTF-16 code units: fast, and collisions are checked against the record anyway. */
export function hash32(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/** The first `length` numbers of `source` in a SharedArrayBuffer of their own. */
export function sharedU32(source: Uint32Array, length = source.length): Uint32Array {
  const out = new Uint32Array(new SharedArrayBuffer(length * 4))
  out.set(source.subarray(0, length))
  return out
}

/** A growable list of 32-bit numbers. */
export class U32List {
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

  /** The numbers pushed, in shared memory. */
  shared(): Uint32Array {
    return sharedU32(this.data, this.length)
  }
}

/** Record lines in shared Buffers of 1 MiB (a longer record gets a Buffer of its own). */
export class LineStore {
  readonly chunks: Buffer[] = []
  private current = LineStore.chunk(CHUNK_BYTES)
  private used = 0
  readonly chunkOf = new U32List()
  readonly startOf = new U32List()
  readonly lengthOf = new U32List()

  private static chunk(bytes: number): Buffer {
    return Buffer.from(new SharedArrayBuffer(bytes))
  }

  get count(): number {
    return this.startOf.length
  }

  /** Appends one line (a string, or bytes copied as they are); returns its record number. */
  append(line: string | Uint8Array): number {
    const length = typeof line === 'string' ? Buffer.byteLength(line) : line.length
    if (length > CHUNK_BYTES - this.used) {
      this.seal()
      if (length > CHUNK_BYTES) this.current = LineStore.chunk(length)
    }
    if (typeof line === 'string') this.current.write(line, this.used, 'utf8')
    else this.current.set(line, this.used)
    this.chunkOf.push(this.chunks.length)
    this.startOf.push(this.used)
    this.lengthOf.push(length)
    this.used += length
    return this.count - 1
  }

  private seal(): void {
    if (this.used > 0) this.chunks.push(this.current.subarray(0, this.used))
    this.current = LineStore.chunk(CHUNK_BYTES)
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
