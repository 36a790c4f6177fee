import { createGzip } from 'node:zlib'
import { Gunzip } from 'fflate'
import { PackedIndexBuilder, type PackedAdvisoryIndex } from './packed-index'
import type { Pace } from './pace'
import type { Advisory } from './types'

/**
 * The stored form of a loaded feed: gzip-compressed lines of JSON, a header line then one
 * parsed advisory per line. Several processes load it instead of downloading the feed again;
 * both directions work in slices so a large snapshot never blocks the process for long. The gzip
 * may be one member or several back to back (RFC 1952: they read as the concatenation of their
 * contents), which lets a refresh copy the compressed blocks of records that did not change.
 */
export const FORMAT = 'osv-advisories/1'

/** The first line. `blocks`: where each block's gzip member ends (counted from the end of the
 * header's own member) and where its records end, when the snapshot was written in blocks. */
export interface SnapshotHeader {
  format: string
  records: number
  blocks?: { memberEnd: number[]; recordEnd: number[] }
}

/** A stored snapshot that cannot be read back. */
export class SnapshotError extends Error {}

/** Node zlib's default level: the snapshot's size and cost were measured at it. */
export const GZIP_LEVEL = 6

/** Uncompressed bytes handed to zlib at once. */
const PIECE_BYTES = 1 << 20

export const headerLine = (records: number, blocks?: SnapshotHeader['blocks']) =>
  `${JSON.stringify({ format: FORMAT, records, ...(blocks ? { blocks } : {}) } satisfies SnapshotHeader)}\n`

/**
 * Compresses an index into a snapshot: its records as stored, one line each. Node's zlib does the
 * compressing on its own thread pool (0.2-0.25 s for 200,000 records where fflate's took 1.2-1.7 s);
 * here the lines are only copied into pieces of about 1 MiB.
 * @example const bytes = await encodeSnapshot(index, pacer())
 */
export async function encodeSnapshot(index: PackedAdvisoryIndex, pace?: Pace): Promise<Uint8Array> {
  const gzip = createGzip({ level: GZIP_LEVEL })
  const parts: Buffer[] = []
  gzip.on('data', (chunk: Buffer) => parts.push(chunk))
  const ended = new Promise<void>((resolve, reject) => gzip.on('end', resolve).on('error', reject))
  const write = async (piece: Buffer) => {
    if (!gzip.write(piece)) await new Promise((resolve) => gzip.once('drain', resolve))
    await pace?.()
  }
  await write(Buffer.from(headerLine(index.size)))
  let piece = Buffer.allocUnsafe(PIECE_BYTES)
  let used = 0
  for (const line of index.lines()) {
    if (used + line.length + 1 > piece.length) {
      if (used > 0) await write(piece.subarray(0, used))
      piece = Buffer.allocUnsafe(Math.max(PIECE_BYTES, line.length + 1))
      used = 0
    }
    piece.set(line, used)
    piece[used + line.length] = 0x0a
    used += line.length + 1
  }
  if (used > 0) await write(piece.subarray(0, used))
  gzip.end()
  await ended
  return Buffer.concat(parts)
}

/** Whether a parsed snapshot line has an advisory's shape. */
export function checkAdvisory(value: unknown): value is Advisory {
  const advisory = value as Advisory
  return typeof advisory?.id === 'string' && typeof advisory.malware === 'boolean' && Array.isArray(advisory.affected)
}

/**
 * Reads a snapshot back into a new index; throws `SnapshotError` when it is damaged or not one.
 * Reads both forms: one gzip member (`encodeSnapshot`) or several (`encodeSnapshotReusing`), as
 * fflate's streaming `Gunzip` reads on into the next member. A snapshot cut off between two members
 * still inflates cleanly; the header's record count is what tells it is short.
 * @example const index = await decodeSnapshot(bytes, pacer())
 */
export async function decodeSnapshot(bytes: Uint8Array, pace?: Pace): Promise<PackedAdvisoryIndex> {
  const builder = new PackedIndexBuilder()
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let header: SnapshotHeader | null = null
  let pending = ''
  let lines = 0
  const take = (line: string) => {
    if (line === '') return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw new SnapshotError(`snapshot line ${lines + 1} is not JSON`)
    }
    lines++
    if (!header) {
      header = value as SnapshotHeader
      if (header?.format !== FORMAT) throw new SnapshotError('not an advisory snapshot')
      return
    }
    if (!checkAdvisory(value)) throw new SnapshotError(`snapshot line ${lines} is not an advisory`)
    builder.add(value, line)
  }
  const gunzip = new Gunzip((chunk, final) => {
    pending += decoder.decode(chunk, { stream: !final })
  })
  // Lines are taken after each push, one at a time, so a slice of the work stays short.
  const takeComplete = async () => {
    const cut = pending.lastIndexOf('\n')
    if (cut < 0) return
    const complete = pending.slice(0, cut).split('\n')
    pending = pending.slice(cut + 1)
    for (const line of complete) {
      take(line)
      await pace?.()
    }
  }
  try {
    for (let offset = 0; offset < bytes.length; offset += 4 * 1024) {
      const end = Math.min(bytes.length, offset + 4 * 1024)
      gunzip.push(bytes.subarray(offset, end), end === bytes.length)
      await takeComplete()
    }
    take(pending)
  } catch (error) {
    if (error instanceof SnapshotError) throw error
    throw new SnapshotError(`snapshot cannot be decompressed: ${(error as Error).message}`)
  }
  const expected = (header as SnapshotHeader | null)?.records
  if (expected === undefined || builder.size !== expected) {
    throw new SnapshotError(`snapshot holds ${builder.size} of ${expected ?? '?'} records`)
  }
  return builder.finish()
}
