import { strFromU8 } from 'fflate'
import { INVALID, MemoryRecorder, NOT_RECORD, PreviousLoad, WITHDRAWN, type LoadMemory } from './load-memory'
import { PackedIndexBuilder, packedIndexFromData, type PackedAdvisoryIndex } from './packed-index'
import { parseOsvRecord } from './osv'
import type { Pace } from './pace'
import { readZipStream, type EntryHeader, type ZipReadOptions } from './zip-stream'

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
  const builder = new PackedIndexBuilder()
  const recorder = new MemoryRecorder()
  const previous = options.previous ? new PreviousLoad(options.previous) : null
  const origins: number[] = []
  const warnings: string[] = []
  let invalid = 0
  let withdrawn = 0
  let reused = 0
  const warn = (header: EntryHeader, text: string) => {
    invalid++
    if (warnings.length < MAX_WARNINGS) warnings.push(text)
    recorder.note(header, INVALID, text)
  }
  const added = (header: EntryHeader, ok: boolean, origin: number) => {
    // A record whose id came earlier in the archive is not indexed and not remembered: read again next time.
    if (!ok) return
    origins.push(origin)
    recorder.note(header, builder.size - 1)
  }
  // Entries passed over, in archive order, until their turn comes (each is looked up once).
  const passed: number[] = []
  const reuse = previous && {
    wanted: (header: EntryHeader) => {
      const i = previous.find(header)
      if (i >= 0) passed.push(i)
      return i >= 0
    },
    take: (header: EntryHeader) => {
      reused++
      const entry = previous.take(passed.shift()!)
      if (entry.kind === 'record') {
        const { line, idHash, keyHashes, ecosystems } = entry
        added(header, builder.addLine(line, idHash, keyHashes, ecosystems), entry.previous + 1)
      } else if (entry.kind === 'withdrawn') {
        withdrawn++
        recorder.note(header, WITHDRAWN)
      } else if (entry.kind === 'invalid') warn(header, entry.reason)
      else recorder.note(header, NOT_RECORD)
    },
  }
  const zip = await readZipStream(
    source,
    (entry) => {
      const { header } = entry
      if (!entry.name.endsWith('.json')) return recorder.note(header, NOT_RECORD)
      let raw: unknown
      try {
        raw = JSON.parse(strFromU8(entry.data))
      } catch (error) {
        return warn(header, `${entry.name}: ${(error as Error).message}`)
      }
      const parsed = parseOsvRecord(raw)
      if (parsed.kind === 'advisory') added(header, builder.add(parsed.advisory), 0)
      else if (parsed.kind === 'withdrawn') {
        withdrawn++
        recorder.note(header, WITHDRAWN)
      } else warn(header, `${entry.name}: ${parsed.error}`)
    },
    { ...options, reuse: reuse || undefined },
  )
  for (const problem of zip.problems) if (warnings.length < MAX_WARNINGS) warnings.push(problem)
  const data = builder.finishData()
  const memory = recorder.finish(data, builder.facts())
  return {
    index: packedIndexFromData(data),
    records: builder.size,
    invalid: invalid + zip.unreadable,
    withdrawn,
    warnings,
    reused,
    memory,
    origins: Uint32Array.from(origins),
  }
}
