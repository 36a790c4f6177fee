import { inflateRawSync } from 'node:zlib'
import { Unzip, type AsyncFlateStreamHandler, type UnzipDecoder, type UnzipDecoderConstructor } from 'fflate'
import type { Pace } from './pace'

/** One file of the archive, whole (OSV records are small). */
export interface ZipEntry {
  name: string
  data: Uint8Array
}

export interface ZipReadOptions {
  pace?: Pace
  /** Entries larger than this are skipped (counted in `unreadable`). Default 4 MiB. */
  maxEntryBytes?: number
  /** Bytes pushed to the decoder at once (a slice inflates every entry it completes). Default 4 KiB. */
  sliceBytes?: number
}

export interface ZipReadResult {
  entries: number
  /** Entries that could not be inflated or were too large. */
  unreadable: number
  /** The first few reasons entries were unreadable. */
  problems: string[]
}

/** The archive as a whole cannot be read: the caller keeps what it had. */
export class ZipReadError extends Error {}

/**
 * Deflate entries inflated whole, once their compressed bytes are in, by Node's zlib: OSV entries
 * are small and many (200,000 in npm's all.zip), and fflate's streaming UnzipInflate spends about
 * five times as long per small entry (it sets up its tables and buffers for every stream). The
 * archive itself is still read as a stream by fflate's Unzip; only one entry is ever held.
 */
function wholeEntryInflate(maxEntryBytes: number): UnzipDecoderConstructor {
  return class WholeEntryInflate implements UnzipDecoder {
    static compression = 8
    ondata!: AsyncFlateStreamHandler
    private parts: Uint8Array[] = []
    private size = 0

    push(chunk: Uint8Array, final: boolean): void {
      if (this.size <= maxEntryBytes && chunk.length > 0) {
        this.parts.push(chunk)
        this.size += chunk.length
      }
      if (!final) return
      const compressed = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts)
      this.parts = []
      let data: Uint8Array<ArrayBuffer>
      try {
        if (this.size > maxEntryBytes) throw new Error(`larger than ${maxEntryBytes} bytes`)
        data = inflateRawSync(compressed, { maxOutputLength: maxEntryBytes }) as Uint8Array<ArrayBuffer>
      } catch (error) {
        const failure = Object.assign(error as Error, { code: 0 })
        return this.ondata(failure, new Uint8Array(0), true)
      }
      this.ondata(null, data, true)
    }
  }
}

/**
 * fflate's Unzip (0.8.x) prepends one chunk list per entry to an internal array (`k`) that it
 * never trims, though it only ever reads the first two (the current entry and the one before):
 * with 200,000 entries every `unshift` moves all the others, and reading npm's all.zip took
 * 16 s instead of 0.3 s. Cutting the array back to those two keeps the reader linear.
 */
function forgetFinishedEntries(unzip: Unzip): void {
  const lists = (unzip as unknown as { k?: unknown[] }).k
  if (Array.isArray(lists) && lists.length > 2) lists.length = 2
}

const EOCD = [0x50, 0x4b, 0x05, 0x06]
// End-of-central-directory record: 22 bytes plus a comment of at most 65,535.
const TAIL_BYTES = 22 + 65_535

/** The last `TAIL_BYTES` bytes seen, to check that the archive ended where a zip ends. */
class Tail {
  private chunks: Uint8Array[] = []
  private length = 0

  push(chunk: Uint8Array): void {
    this.chunks.push(chunk)
    this.length += chunk.length
    while (this.chunks.length > 1 && this.length - this.chunks[0].length >= TAIL_BYTES) {
      this.length -= this.chunks.shift()!.length
    }
  }

  hasEndRecord(): boolean {
    const bytes = Buffer.concat(this.chunks)
    for (let i = bytes.length - 22; i >= 0 && i >= bytes.length - TAIL_BYTES; i--) {
      if (EOCD.every((b, k) => bytes[i + k] === b)) return true
    }
    return false
  }
}

/**
 * Reads a zip archive from a byte stream without holding it whole: each entry is inflated as its
 * bytes arrive and handed to `onEntry` when complete. A damaged entry is counted and skipped; an
 * archive that breaks off, holds no entries or is mostly unreadable throws `ZipReadError`.
 * @example await readZipStream(response.body, (entry) => records.push(JSON.parse(strFromU8(entry.data))))
 */
export async function readZipStream(
  source: AsyncIterable<Uint8Array>,
  onEntry: (entry: ZipEntry) => void,
  options: ZipReadOptions = {},
): Promise<ZipReadResult> {
  const maxEntryBytes = options.maxEntryBytes ?? 4 * 1024 * 1024
  const sliceBytes = options.sliceBytes ?? 4 * 1024
  const result: ZipReadResult = { entries: 0, unreadable: 0, problems: [] }
  const fail = (name: string, reason: string) => {
    result.unreadable++
    if (result.problems.length < 20) result.problems.push(`${name}: ${reason}`)
  }
  const unzip = new Unzip()
  unzip.register(wholeEntryInflate(maxEntryBytes))
  unzip.onfile = (file) => {
    let parts: Uint8Array[] = []
    let size = 0
    let broken = false
    file.ondata = (error, data, final) => {
      if (broken) return
      if (error) {
        broken = true
        parts = []
        return fail(file.name, error.message)
      }
      if (data && data.length > 0) {
        size += data.length
        if (size > maxEntryBytes) {
          broken = true
          parts = []
          return fail(file.name, `larger than ${maxEntryBytes} bytes`)
        }
        parts.push(data)
      }
      if (!final) return
      result.entries++
      // Directories and other non-record files are read (so the stream stays in step) and dropped.
      const whole = parts.length === 1 ? parts[0] : Buffer.concat(parts)
      if (!file.name.endsWith('/')) ready.push({ name: file.name, data: whole })
      parts = []
    }
    // Started whatever it is: an entry left unstarted keeps its bytes buffered inside the decoder.
    file.start()
    forgetFinishedEntries(unzip)
  }
  const tail = new Tail()
  // Entries completed by one push, handed out one at a time so the caller's work paces too.
  let ready: ZipEntry[] = []
  const handOut = async () => {
    const entries = ready
    ready = []
    for (const entry of entries) {
      onEntry(entry)
      await options.pace?.()
    }
  }
  try {
    for await (const chunk of source) {
      tail.push(chunk)
      for (let offset = 0; offset < chunk.length; offset += sliceBytes) {
        unzip.push(chunk.subarray(offset, Math.min(chunk.length, offset + sliceBytes)))
        await handOut()
        await options.pace?.()
      }
    }
    unzip.push(new Uint8Array(0), true)
    await handOut()
  } catch (error) {
    if (error instanceof ZipReadError) throw error
    throw new ZipReadError(`not a readable zip archive: ${(error as Error).message}`)
  }
  if (!tail.hasEndRecord()) throw new ZipReadError('the zip archive is truncated (no end of central directory)')
  const total = result.entries + result.unreadable
  if (total === 0) throw new ZipReadError('the zip archive holds no entries')
  if (result.unreadable * 2 > total) {
    throw new ZipReadError(`most entries of the zip archive are unreadable (${result.problems[0]})`)
  }
  return result
}
