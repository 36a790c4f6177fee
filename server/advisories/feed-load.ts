import { strFromU8 } from 'fflate'
import {
  INVALID,
  MemoryRecorder,
  NOT_RECORD,
  notedOf,
  PreviousLoad,
  WITHDRAWN,
  type LoadMemory,
  type NotedEntry,
} from './load-memory'
import { PackedIndexBuilder, packedIndexFromData, type PackedAdvisoryIndex } from './packed-index'
import { parseOsvRecord } from './osv'
import type { Pace } from './pace'
import {
  inflateEntry,
  readZipStream,
  tooManyEntries,
  ZipReadError,
  type EntryHeader,
  type ZipEntry,
  type ZipReadOptions,
} from './zip-stream'
import type { Directory } from './zip-directory'

/** A feed archive read into a new index; the figures are what status and logs report. */
export interface FeedLoadResult {
  index: PackedAdvisoryIndex
  /** Valid, not withdrawn records indexed. */
  records: number
  /** Records (or archive entries) that were not valid OSV and were skipped. */
  invalid: number
  withdrawn: number
  /** The first few reasons records were skipped. */
  warnings: string[]
  /** Entries taken unread from the previous load (their header had not changed). */
  reused: number
  /** What this load leaves for the next one. */
  memory: LoadMemory
  /** Per record of the new index: its record number in the previous one plus 1, or 0 when new. */
  origins: Uint32Array
}

const MAX_WARNINGS = 20

export interface FeedLoadOptions extends Omit<ZipReadOptions, 'reuse'> {
  pace?: Pace
  /** The memory of the load whose index is served now: its unchanged entries are not read again. */
  previous?: LoadMemory | null
}

/**
 * One load of a feed archive, entry by entry in archive order, whichever way its bytes arrive:
 * `read` an entry's bytes, or `reuse` an entry the previous load already read (its local header
 * is unchanged), then `finish`. The index and figures are those a full load of the same archive
 * gives.
 */
class RecordLoad {
  private readonly builder = new PackedIndexBuilder()
  private readonly recorder = new MemoryRecorder()
  readonly previous: PreviousLoad | null
  private readonly origins: number[] = []
  private readonly warnings: string[] = []
  private invalid = 0
  private withdrawn = 0
  private reused = 0

  constructor(previous: LoadMemory | null | undefined) {
    this.previous = previous ? new PreviousLoad(previous) : null
  }

  private warn(noted: NotedEntry, text: string): void {
    this.invalid++
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push(text)
    this.recorder.note(noted, INVALID, text)
  }

  private added(noted: NotedEntry, ok: boolean, origin: number): void {
    // A record whose id came earlier in the archive is not indexed and not remembered: read again next time.
    if (!ok) return
    this.origins.push(origin)
    this.recorder.note(noted, this.builder.size - 1)
  }

  /** An entry read whole. */
  read(entry: ZipEntry): void {
    const header = notedOf(entry.header)
    if (!entry.name.endsWith('.json')) return this.recorder.note(header, NOT_RECORD)
    let raw: unknown
    try {
      raw = JSON.parse(strFromU8(entry.data))
    } catch (error) {
      return this.warn(header, `${entry.name}: ${(error as Error).message}`)
    }
    const parsed = parseOsvRecord(raw)
    if (parsed.kind === 'advisory') this.added(header, this.builder.add(parsed.advisory), 0)
    else if (parsed.kind === 'withdrawn') {
      this.withdrawn++
      this.recorder.note(header, WITHDRAWN)
    } else this.warn(header, `${entry.name}: ${parsed.error}`)
  }

  /** An entry passed over: what previous entry `i` (from `previous.find`) produced, in its turn. */
  reuse(header: NotedEntry, i: number): void {
    this.reused++
    const entry = this.previous!.take(i)
    if (entry.kind === 'record') {
      const { line, idHash, keyHashes, ecosystems } = entry
      this.added(
        header,
        this.builder.addLine(line, idHash, keyHashes, ecosystems, this.previous!.sharesLines),
        entry.previous + 1,
      )
    } else if (entry.kind === 'withdrawn') {
      this.withdrawn++
      this.recorder.note(header, WITHDRAWN)
    } else if (entry.kind === 'invalid') this.warn(header, entry.reason)
    else this.recorder.note(header, NOT_RECORD)
  }

  finish(zip: { unreadable: number; problems: string[] }): FeedLoadResult {
    for (const problem of zip.problems) if (this.warnings.length < MAX_WARNINGS) this.warnings.push(problem)
    const data = this.builder.finishData()
    return {
      index: packedIndexFromData(data),
      records: this.builder.size,
      invalid: this.invalid + zip.unreadable,
      withdrawn: this.withdrawn,
      warnings: this.warnings,
      reused: this.reused,
      memory: this.recorder.finish(data, this.builder.facts()),
      origins: Uint32Array.from(this.origins),
    }
  }
}

/**
 * Reads an OSV `all.zip` (one JSON record per entry) from a byte stream into a fresh index,
 * built beside whatever index the caller serves from. Bad records are counted and skipped;
 * an archive that cannot be read throws (`ZipReadError`) and nothing is built. With the previous
 * load's memory, an entry whose local header (name, CRC-32, sizes) is unchanged is not inflated
 * or parsed: its earlier outcome (its record's stored line, or withdrawn, or invalid) is taken in
 * its turn, so the index and figures are those a full load of the same archive gives.
 * @example const { index, records, memory } = await loadOsvZip(response.body, { pace: pacer(), previous })
 */
export async function loadOsvZip(
  source: AsyncIterable<Uint8Array>,
  options: FeedLoadOptions = {},
): Promise<FeedLoadResult> {
  const load = new RecordLoad(options.previous)
  const previous = load.previous
  // Entries passed over, in archive order, until their turn comes (each is looked up once).
  const passed: number[] = []
  const reuse = previous && {
    wanted: (header: EntryHeader) => {
      const i = previous.find(notedOf(header))
      if (i >= 0) passed.push(i)
      return i >= 0
    },
    take: (header: EntryHeader) => load.reuse(notedOf(header), passed.shift()!),
  }
  const zip = await readZipStream(source, (entry) => load.read(entry), { ...options, reuse: reuse || undefined })
  return load.finish(zip)
}

/**
 * A load from an archive's central directory: `wanted` lists the entries that must be read (new
 * or changed since the previous load); the caller fetches their compressed bytes, and `load` reads
 * those and takes every other entry from the previous load, in directory order.
 * @example const plan = new DirectoryLoad(directory, { previous }); const bytes = await fetch(plan.wanted); await plan.load((i) => bytes.get(i))
 */
export class DirectoryLoad {
  private readonly records: RecordLoad
  /** Per entry: the previous entry it repeats (>= 0), or -1 when it must be read. */
  private readonly repeats: Int32Array
  readonly wanted: number[] = []
  private readonly maxEntryBytes: number

  constructor(
    private readonly directory: Directory,
    private readonly options: Pick<FeedLoadOptions, 'previous' | 'pace' | 'maxEntryBytes' | 'maxEntries'> = {},
  ) {
    // Refused before any entry is planned: the directory says how many there are.
    if (options.maxEntries !== undefined && directory.count > options.maxEntries)
      throw tooManyEntries(options.maxEntries)
    this.records = new RecordLoad(options.previous)
    this.maxEntryBytes = options.maxEntryBytes ?? 4 * 1024 * 1024
    this.repeats = new Int32Array(directory.count).fill(-1)
    const previous = this.records.previous
    for (let i = 0; i < directory.count; i++) {
      // Folders are dropped unread, as the stream reader drops them; an entry with a data descriptor is always read.
      if (directory.isFolder(i)) continue
      const repeat = directory.descriptor(i) || !previous ? -1 : previous.find(this.noted(i))
      this.repeats[i] = repeat
      if (repeat < 0 && directory.compressedSize[i] <= this.maxEntryBytes) this.wanted.push(i)
    }
  }

  /** Entry `i` as the memory notes it, its name still in the directory's bytes. */
  private noted(i: number): NotedEntry {
    const d = this.directory
    const [crc32, compressedSize, size] = [d.crc32[i], d.compressedSize[i], d.size[i]]
    return {
      name: d.bytes,
      start: d.nameStart[i],
      end: d.nameEnd[i],
      crc32,
      compressedSize,
      size,
      descriptor: d.descriptor(i),
    }
  }

  /** Reads the wanted entries from `compressedOf(i)` and takes the rest from the previous load. */
  async load(compressedOf: (i: number) => Buffer): Promise<FeedLoadResult> {
    const zip = { unreadable: 0, problems: [] as string[] }
    const d = this.directory
    for (let i = 0; i < d.count; i++) {
      const repeat = this.repeats[i]
      if (repeat >= 0) this.records.reuse(this.noted(i), repeat)
      else if (!d.isFolder(i)) this.read(i, compressedOf, zip)
      if (i % 1024 === 0) await this.options.pace?.()
    }
    if (d.count === 0) throw new ZipReadError('the zip archive holds no entries')
    if (zip.unreadable * 2 > d.count) {
      throw new ZipReadError(`most entries of the zip archive are unreadable (${zip.problems[0]})`)
    }
    return this.records.finish(zip)
  }

  private read(i: number, compressedOf: (i: number) => Buffer, zip: { unreadable: number; problems: string[] }) {
    const header = this.directory.header(i)
    const data =
      header.compressedSize > this.maxEntryBytes
        ? `larger than ${this.maxEntryBytes} bytes`
        : inflateEntry(compressedOf(i), this.directory.method[i], this.maxEntryBytes)
    if (typeof data !== 'string') return this.records.read({ name: header.name, data, header })
    zip.unreadable++
    if (zip.problems.length < 20) zip.problems.push(`${header.name}: ${data}`)
  }
}
