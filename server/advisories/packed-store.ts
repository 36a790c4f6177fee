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

/**
 * Record lines in shared Buffers of 1 MiB (a longer record gets a Buffer of its own). A line that
 * an earlier store holds can be taken where it lies: the earlier store's chunk becomes a chunk of
 * this one (shared memory, never written again), so a refresh copies only the lines that changed.
 */
export class LineStore {
  /** By chunk number: sealed or adopted chunks, and a place for the one being filled. */
  private readonly numbered: Buffer[] = []
  private current = LineStore.chunk(CHUNK_BYTES)
  private currentNo = this.open()
  private used = 0
  /** Earlier chunk number -> its number here. */
  private readonly adopted = new Map<number, number>()
  readonly chunkOf = new U32List()
  readonly startOf = new U32List()
  readonly lengthOf = new U32List()

  private static chunk(bytes: number): Buffer {
    return Buffer.from(new SharedArrayBuffer(bytes))
  }

  private open(): number {
    this.numbered.push(Buffer.alloc(0))
    return this.numbered.length - 1
  }

  get count(): number {
    return this.startOf.length
  }

  /** The chunks by number (complete after `finish`). */
  get chunks(): Buffer[] {
    return this.numbered
  }

  private push(chunk: number, start: number, length: number): number {
    this.chunkOf.push(chunk)
    this.startOf.push(start)
    this.lengthOf.push(length)
    return this.count - 1
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
    this.used += length
    return this.push(this.currentNo, this.used - length, length)
  }

  /**
   * Appends the line at `start` of an earlier store's chunk number `from` (`chunk`), without
   * copying it; returns its record number.
   */
  appendStored(from: number, chunk: Buffer, start: number, length: number): number {
    let here = this.adopted.get(from)
    if (here === undefined) {
      here = this.numbered.push(chunk) - 1
      this.adopted.set(from, here)
    }
    return this.push(here, start, length)
  }

  private seal(): void {
    // A chunk left mostly empty (a refresh adds few lines) is copied to its size: its 1 MiB is not kept.
    const filled = this.current.subarray(0, this.used)
    const small = this.used * 2 < this.current.length
    this.numbered[this.currentNo] = small ? LineStore.chunk(this.used) : filled
    if (small) this.numbered[this.currentNo].set(filled)
    this.current = LineStore.chunk(CHUNK_BYTES)
    this.currentNo = this.open()
    this.used = 0
  }

  /** The bytes of record `r`. */
  line(r: number): Buffer {
    const chunk = this.chunkOf.data[r]
    const buffer = chunk === this.currentNo ? this.current : this.numbered[chunk]
    const start = this.startOf.data[r]
    return buffer.subarray(start, start + this.lengthOf.data[r])
  }

  finish(): void {
    this.seal()
    // The chunk opened by the last seal holds nothing.
    this.numbered.pop()
  }
}
