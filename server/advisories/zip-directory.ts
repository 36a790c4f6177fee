import type { EntryHeader } from './zip-entries'
import { zip64Values } from './zip64'

/**
 * The central directory of a zip archive (APPNOTE 4.3.12-4.3.16), read from the archive's end:
 * every entry's name, CRC-32, sizes and where its local header starts. With it a refresh learns
 * which entries changed from a few ranges of the archive instead of reading all of it.
 */

const CENTRAL_HEADER = 0x02014b50
const LOCAL_HEADER = 0x04034b50
const END_RECORD = 0x06054b50
const END_LOCATOR_64 = 0x07064b50
const END_RECORD_64 = 0x06064b50
const FLAG_DESCRIPTOR = 0x0008
const FLAG_UTF8 = 0x0800
const MAX16 = 0xffff
const MAX32 = 0xffffffff

/** The end record is 22 bytes plus a comment of at most 65,535: the tail that surely holds it. */
export const END_SEARCH_BYTES = 22 + 65_535 + 20 + 56

/** The archive is not a zip this reader can take by ranges; the caller reads it whole instead. */
export class ZipDirectoryError extends Error {}

/** Where the central directory lies, from the end record (zip64 when the archive needs it). */
export interface DirectoryPlace {
  offset: number
  size: number
  /** As the end record counts them (modulo 65,536 in a plain end record of a larger archive). */
  entries: number
}

/**
 * Finds the central directory from the archive's last bytes (`tail`, which ends at byte
 * `archiveSize`); throws `ZipDirectoryError` when there is no end record or its zip64 record lies
 * outside the tail.
 * @example const place = directoryPlace(lastBytes, totalSize)
 */
export function directoryPlace(tail: Buffer, archiveSize: number): DirectoryPlace {
  const tailStart = archiveSize - tail.length
  for (let at = tail.length - 22; at >= 0; at--) {
    if (tail.readUInt32LE(at) !== END_RECORD) continue
    // The comment length must bring the record to the archive's end: a signature inside a comment does not.
    if (at + 22 + tail.readUInt16LE(at + 20) !== tail.length) continue
    const entries = tail.readUInt16LE(at + 10)
    const size = tail.readUInt32LE(at + 12)
    const offset = tail.readUInt32LE(at + 16)
    if (entries !== MAX16 && size !== MAX32 && offset !== MAX32)
      return checked({ offset, size, entries }, tailStart + at)
    return zip64Place(tail, tailStart, at)
  }
  throw new ZipDirectoryError('no end of central directory')
}

function zip64Place(tail: Buffer, tailStart: number, endAt: number): DirectoryPlace {
  const locatorAt = endAt - 20
  if (locatorAt < 0 || tail.readUInt32LE(locatorAt) !== END_LOCATOR_64)
    throw new ZipDirectoryError('zip64 end record without its locator')
  const recordAt = Number(tail.readBigUInt64LE(locatorAt + 8)) - tailStart
  if (recordAt < 0 || recordAt + 56 > tail.length || tail.readUInt32LE(recordAt) !== END_RECORD_64)
    throw new ZipDirectoryError('zip64 end record outside the last bytes read')
  const entries = Number(tail.readBigUInt64LE(recordAt + 32))
  const size = Number(tail.readBigUInt64LE(recordAt + 40))
  const offset = Number(tail.readBigUInt64LE(recordAt + 48))
  return checked({ offset, size, entries }, tailStart + recordAt)
}

function checked(place: DirectoryPlace, endsBefore: number): DirectoryPlace {
  if (place.offset + place.size > endsBefore) throw new ZipDirectoryError('central directory overlaps its end record')
  return place
}

/**
 * The entries of a central directory in typed columns (directory order): 200,000 entries make no
 * objects or strings until one is asked for. Names stay in the directory's bytes.
 */
export class Directory {
  readonly count: number
  readonly nameStart: Uint32Array
  readonly nameEnd: Uint32Array
  readonly crc32: Uint32Array
  readonly compressedSize: Float64Array
  readonly size: Float64Array
  readonly localOffset: Float64Array
  readonly method: Uint16Array
  readonly flags: Uint16Array

  constructor(
    readonly bytes: Buffer,
    count: number,
  ) {
    this.count = count
    this.nameStart = new Uint32Array(count)
    this.nameEnd = new Uint32Array(count)
    this.crc32 = new Uint32Array(count)
    this.compressedSize = new Float64Array(count)
    this.size = new Float64Array(count)
    this.localOffset = new Float64Array(count)
    this.method = new Uint16Array(count)
    this.flags = new Uint16Array(count)
  }

  /** Entry `i`'s name (a string made on demand). */
  name(i: number): string {
    return this.bytes.toString(this.flags[i] & FLAG_UTF8 ? 'utf8' : 'latin1', this.nameStart[i], this.nameEnd[i])
  }

  /** Whether entry `i` is a folder (its name ends with `/`). */
  isFolder(i: number): boolean {
    return this.nameEnd[i] > this.nameStart[i] && this.bytes[this.nameEnd[i] - 1] === 0x2f
  }

  descriptor(i: number): boolean {
    return !!(this.flags[i] & FLAG_DESCRIPTOR)
  }

  /** Entry `i` as a local header describes it. */
  header(i: number): EntryHeader {
    const { crc32, compressedSize, size } = this
    return {
      name: this.name(i),
      crc32: crc32[i],
      compressedSize: compressedSize[i],
      size: size[i],
      descriptor: this.descriptor(i),
    }
  }
}

/** How many records a directory of `length` bytes holds, and where each starts; throws when out of step. */
function recordStarts(bytes: Buffer, offset: number): number[] {
  const starts: number[] = []
  for (let at = 0; at < bytes.length;) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== CENTRAL_HEADER)
      throw new ZipDirectoryError(`no central directory record at byte ${offset + at}`)
    starts.push(at)
    at += 46 + bytes.readUInt16LE(at + 28) + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32)
    if (at > bytes.length) throw new ZipDirectoryError('central directory record runs past its end')
  }
  return starts
}

/**
 * Reads every entry of a central directory (`bytes`, `place.size` long), in directory order.
 * Throws `ZipDirectoryError` when a record is out of place or the count disagrees with the end record.
 * @example const directory = readDirectory(directoryBytes, place)
 */
export function readDirectory(bytes: Buffer, place: DirectoryPlace): Directory {
  const starts = recordStarts(bytes, place.offset)
  // A plain end record counts modulo 65,536 (writers that skip zip64 for the count alone).
  if (starts.length % 65_536 !== place.entries % 65_536)
    throw new ZipDirectoryError(
      `central directory holds ${starts.length} entries, its end record says ${place.entries}`,
    )
  const directory = new Directory(bytes, starts.length)
  starts.forEach((at, i) => {
    const nameLength = bytes.readUInt16LE(at + 28)
    const extraLength = bytes.readUInt16LE(at + 30)
    directory.flags[i] = bytes.readUInt16LE(at + 8)
    directory.method[i] = bytes.readUInt16LE(at + 10)
    directory.crc32[i] = bytes.readUInt32LE(at + 16)
    directory.nameStart[i] = at + 46
    directory.nameEnd[i] = at + 46 + nameLength
    let compressedSize = bytes.readUInt32LE(at + 20)
    let size = bytes.readUInt32LE(at + 24)
    let localOffset = bytes.readUInt32LE(at + 42)
    if (compressedSize === MAX32 || size === MAX32 || localOffset === MAX32) {
      const extra = bytes.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength)
      const wanted = { size: size === MAX32, compressedSize: compressedSize === MAX32, offset: localOffset === MAX32 }
      const wide = zip64Values(extra, wanted, (message) => new ZipDirectoryError(message))
      size = wide.size ?? size
      compressedSize = wide.compressedSize ?? compressedSize
      localOffset = wide.offset ?? localOffset
    }
    directory.compressedSize[i] = compressedSize
    directory.size[i] = size
    directory.localOffset[i] = localOffset
  })
  return directory
}

/**
 * Entry `i`'s compressed bytes inside `span` (archive bytes starting at `spanStart`), after its
 * local header; throws `ZipDirectoryError` when no local header is where the directory says.
 * @example const compressed = entryData(bytes, start, directory, i)
 */
export function entryData(span: Buffer, spanStart: number, directory: Directory, i: number): Buffer {
  const at = directory.localOffset[i] - spanStart
  if (at < 0 || at + 30 > span.length || span.readUInt32LE(at) !== LOCAL_HEADER)
    throw new ZipDirectoryError(`no local header for ${directory.name(i)} where the directory says`)
  const start = at + 30 + span.readUInt16LE(at + 26) + span.readUInt16LE(at + 28)
  const end = start + directory.compressedSize[i]
  if (end > span.length) throw new ZipDirectoryError(`${directory.name(i)} runs past the bytes read`)
  return span.subarray(start, end)
}

/**
 * Where each entry's bytes end (the next entry's local header, or the directory for the last), by
 * entry number: a changed entry is fetched from its local header to there.
 * @example const ends = entryEnds(directory, place.offset); fetch(directory.localOffset[i], ends[i])
 */
export function entryEnds(directory: Directory, directoryOffset: number): Float64Array {
  const { count, localOffset } = directory
  const ends = new Float64Array(count)
  let ascending = true
  for (let i = 1; i < count && ascending; i++) ascending = localOffset[i] > localOffset[i - 1]
  // Writers list entries in the order they wrote them; sorting is only for those that do not.
  const order = ascending
    ? null
    : Uint32Array.from({ length: count }, (_, i) => i).sort((a, b) => localOffset[a] - localOffset[b])
  for (let k = 0; k < count; k++) {
    const i = order ? order[k] : k
    ends[i] = k + 1 < count ? localOffset[order ? order[k + 1] : k + 1] : directoryOffset
  }
  return ends
}
