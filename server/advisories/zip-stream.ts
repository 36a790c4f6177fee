import { inflateRawSync } from 'node:zlib'
import type { Pace } from './pace'
import { ZipEntryReader, type EntryHeader, type RawEntry } from './zip-entries'

export type { EntryHeader } from './zip-entries'

/** One file of the archive, whole (OSV records are small). */
export interface ZipEntry {
  name: string
  data: Uint8Array
  header: EntryHeader
}

/** Entries the caller already holds the result of: passed over unread, reported in their turn. */
export interface ZipReuse {
  /** Asked at each local header (never for entries with a data descriptor). */
  wanted(header: EntryHeader): boolean
  /** A wanted entry, in archive order among the entries handed to `onEntry`. */
  take(header: EntryHeader): void
}

export interface ZipReadOptions {
  pace?: Pace
  /** Entries larger than this are skipped (counted in `unreadable`). Default 4 MiB. */
  maxEntryBytes?: number
  /** Bytes pushed to the decoder at once (a slice inflates every entry it completes). Default 4 KiB. */
  sliceBytes?: number
  reuse?: ZipReuse
  /**
   * Most entries the archive may hold (`ADVISORY_MAX_ENTRIES`): one more and the read stops with
   * `ZipReadError`, before the entries past the bound cost memory. Default unbounded.
   */
  maxEntries?: number
}

/** The refusal of an archive past `maxEntries`. */
export function tooManyEntries(maxEntries: number): ZipReadError {
  return new ZipReadError(`the zip archive holds more than ${maxEntries} entries (ADVISORY_MAX_ENTRIES)`)
}

interface ZipReadResult {
  entries: number
  /** Entries that could not be inflated or were too large. */
  unreadable: number
  /** The first few reasons entries were unreadable. */
  problems: string[]
}

/** The archive as a whole cannot be read: the caller keeps what it had. */
export class ZipReadError extends Error {}

/**
 * An entry's bytes from its compressed bytes, or why they cannot be read. Deflate entries are
 * small and inflated whole by zlib.
 * @example const data = inflateEntry(compressed, 8, 4 << 20)
 */
export function inflateEntry(compressed: Buffer, method: number, maxEntryBytes: number): Uint8Array | string {
  if (method === 0) return compressed
  if (method !== 8) return `unknown compression type ${method}`
  try {
    return inflateRawSync(compressed, { maxOutputLength: maxEntryBytes })
  } catch (error) {
    return (error as Error).message
  }
}

function inflate(entry: RawEntry, maxEntryBytes: number): Uint8Array | string {
  if (!entry.compressed) return `larger than ${maxEntryBytes} bytes`
  return inflateEntry(entry.compressed, entry.method, maxEntryBytes)
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
 * bytes arrive and handed to `onEntry` when complete. The entries are split by `ZipEntryReader`
 * (fflate's streaming Unzip kept a list per entry that only a private field could trim, and
 * scanned data-descriptor entries a byte at a time) and inflated whole by Node's zlib (fflate's
 * streaming inflate spent about five times as long per small entry). A damaged entry is counted and skipped; an
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
  const reuse = options.reuse
  const reader = new ZipEntryReader(maxEntryBytes, reuse ? (header) => reuse.wanted(header) : undefined)
  // Entries completed by one push, handed out one at a time so the caller's work paces too.
  let ready: (ZipEntry | EntryHeader)[] = []
  const maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY
  const take = (entry: RawEntry) => {
    if (result.entries + result.unreadable >= maxEntries) throw tooManyEntries(maxEntries)
    const { header } = entry
    if (entry.skipped) {
      result.entries++
      return void ready.push(header)
    }
    const data = inflate(entry, maxEntryBytes)
    if (typeof data === 'string') return fail(header.name, data)
    result.entries++
    // Directories and other non-record files are read (so the stream stays in step) and dropped.
    if (!header.name.endsWith('/')) ready.push({ name: header.name, data, header })
  }
  const tail = new Tail()
  const handOut = async () => {
    const entries = ready
    ready = []
    for (const entry of entries) {
      if ('data' in entry) onEntry(entry)
      else reuse?.take(entry)
      await options.pace?.()
    }
  }
  try {
    for await (const chunk of source) {
      tail.push(chunk)
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      for (let offset = 0; offset < bytes.length; offset += sliceBytes) {
        reader.push(bytes.subarray(offset, Math.min(bytes.length, offset + sliceBytes))).forEach(take)
        await handOut()
        await options.pace?.()
      }
    }
  } catch (error) {
    if (error instanceof ZipReadError) throw error
    throw new ZipReadError(`not a readable zip archive: ${(error as Error).message}`)
  }
  if (!reader.done || !tail.hasEndRecord())
    throw new ZipReadError('the zip archive is truncated (no end of central directory)')
  const total = result.entries + result.unreadable
  if (total === 0) throw new ZipReadError('the zip archive holds no entries')
  if (result.unreadable * 2 > total) {
    throw new ZipReadError(`most entries of the zip archive are unreadable (${result.problems[0]})`)
  }
  return result
}
