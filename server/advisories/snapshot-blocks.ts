import { promisify } from 'node:util'
import { gzip as gzipCallback } from 'node:zlib'
import type { PackedAdvisoryIndex, PackedIndexData } from './packed-index'
import type { Pace } from './pace'
import { U32List } from './packed-store'
import { GZIP_LEVEL, headerLine } from './snapshot'

const gzipMember = promisify(gzipCallback)

/**
 * The snapshot (snapshot.ts's format) written as gzip members of about `BLOCK_BYTES` of records
 * each: a refresh copies the compressed blocks of records that did not change and compresses the
 * few around what did, where a whole snapshot of 200,000 records took 0.2-0.25 s of zlib.
 */

/**
 * Uncompressed line bytes aimed at per block of an incremental snapshot. A byte budget rather than
 * a record count because records range from a few hundred bytes (MAL reports) to over 100 KB (large
 * GHSA records): bytes bound what a changed record costs, its block compressed anew (1 MiB, 3-5 ms
 * of CPU). Each member starts with an empty window and fresh code tables: at 1 MiB that added 1.2%
 * (35 KB over 54 blocks) to the 2.8 MB snapshot of 200,000 synthetic records; smaller blocks would
 * cost more size, larger ones more CPU per change.
 */
export const BLOCK_BYTES = 1 << 20

/**
 * What an incremental snapshot leaves for the next one: its record blocks, each compressed as a
 * gzip member of its own, and the records each holds. All of it lives in shared memory, so it
 * travels to the next loader thread with the index it describes and is copied nowhere.
 */
export interface SnapshotMemory {
  /** The blocks' members back to back: block b is members[memberEnd[b - 1] ?? 0 .. memberEnd[b]]. */
  members: Uint8Array
  memberEnd: Uint32Array
  /** Block b holds records recordEnd[b - 1] ?? 0 up to (not including) recordEnd[b] of its index. */
  recordEnd: Uint32Array
}

/** How `encodeSnapshotReusing` encodes, and what it may reuse. */
export interface SnapshotReuseOptions {
  /** The memory of the snapshot of the index `origins` refers to; without both, nothing is reused. */
  previous?: SnapshotMemory | null
  /** Per record of the index: its record number in the previous index plus 1, or 0 when new. */
  origins?: Uint32Array
  pace?: Pace
  /** Uncompressed bytes aimed at per block (`BLOCK_BYTES`; tests make many small blocks). */
  blockBytes?: number
}

/** A snapshot encoded by `encodeSnapshotReusing`, and what the next encode may reuse of it. */
export interface ReusingSnapshot {
  bytes: Uint8Array
  memory: SnapshotMemory
  /** Blocks whose compressed bytes were copied from `previous` rather than compressed again. */
  reusedBlocks: number
}

/**
 * Compresses an index into a snapshot of the same format and text as `encodeSnapshot`, in blocks
 * of consecutive records, each its own gzip member (the header line too, rebuilt every time). A
 * previous block whose records the index holds again, all of them, consecutively and in order
 * (per `origins`, as a feed load gives them), is copied as it is; only the records around a change
 * are compressed again, on zlib's thread pool. A refresh of 200,000 records where one changed then
 * compresses one block of 1 MiB instead of 57 MB (about 10 ms of CPU instead of 200-300). Blocks
 * hold about a quarter to one and a half of `blockBytes` (more for a record larger than that),
 * however many refreshes came before.
 * @example
 * const loaded = await loadOsvZip(body, { pace, previous: held.memory })
 * const { bytes, memory } = await encodeSnapshotReusing(loaded.index, {
 *   previous: held.snapshotMemory,
 *   origins: loaded.origins,
 *   pace,
 * })
 */
export async function encodeSnapshotReusing(
  index: PackedAdvisoryIndex,
  options: SnapshotReuseOptions = {},
): Promise<ReusingSnapshot> {
  const { previous = null, origins, pace, blockBytes = BLOCK_BYTES } = options
  if (previous && origins && origins.length !== index.size) {
    throw new RangeError(`${origins.length} origins for an index of ${index.size} records`)
  }
  const lines = storedLines(index.data)
  const planned = previous && origins ? planRuns(lines, previous, origins) : [freshRun(lines, 0, index.size)]
  const writer = new MemberWriter()
  let reusedBlocks = 0
  for (const run of absorbSmallRuns(planned, blockBytes / 4)) {
    if (run.block >= 0) {
      writer.add(memberOf(previous!, run.block), run.end)
      reusedBlocks++
      continue
    }
    for (const [first, end] of freshBlocks(run, lines, blockBytes)) {
      writer.add(await gzipMember(lines.text(first, end), { level: GZIP_LEVEL }), end)
      await pace?.()
    }
  }
  // The header lists the blocks, so that another process can tell which of them it already holds.
  const header = await gzipMember(headerLine(index.size, writer.table()), { level: GZIP_LEVEL })
  return { ...writer.finish(header), reusedBlocks }
}

/** Record r's stored line, and the text (lines and newlines) of records first..end - 1. */
function storedLines({ chunks, chunkOf, startOf, lengthOf }: PackedIndexData) {
  const line = (r: number) => chunks[chunkOf[r]].subarray(startOf[r], startOf[r] + lengthOf[r])
  const bytes = (first: number, end: number) => {
    let sum = end - first
    for (let r = first; r < end; r++) sum += lengthOf[r]
    return sum
  }
  return {
    size: startOf.length,
    bytes,
    text(first: number, end: number): Buffer {
      const text = Buffer.allocUnsafe(bytes(first, end))
      let used = 0
      for (let r = first; r < end; r++) {
        text.set(line(r), used)
        text[used + lengthOf[r]] = 0x0a
        used += lengthOf[r] + 1
      }
      return text
    },
  }
}

type StoredLines = ReturnType<typeof storedLines>

/** Records first..end - 1 of the new index: a previous block copied as it is, or fresh (block -1). */
interface Run {
  first: number
  end: number
  block: number
  /** Their text's length. */
  bytes: number
}

const freshRun = (lines: StoredLines, first: number, end: number): Run => ({
  first,
  end,
  block: -1,
  bytes: lines.bytes(first, end),
})

const blockStart = (memory: SnapshotMemory, block: number) => (block === 0 ? 0 : memory.recordEnd[block - 1])

const memberOf = (memory: SnapshotMemory, block: number) =>
  memory.members.subarray(block === 0 ? 0 : memory.memberEnd[block - 1], memory.memberEnd[block])

/** The previous block whose first record is `record`, or -1. */
function blockStartingAt(memory: SnapshotMemory, record: number): number {
  const { recordEnd } = memory
  // The first block ending after `record` is the one holding it.
  let low = 0
  let high = recordEnd.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (recordEnd[middle] > record) high = middle
    else low = middle + 1
  }
  return low < recordEnd.length && blockStart(memory, low) === record ? low : -1
}

/** The previous block that records r, r + 1, ... of the new index repeat whole and in order, or -1. */
function reusableBlock(previous: SnapshotMemory, origins: Uint32Array, r: number): number {
  const start = origins[r] - 1
  const block = start < 0 ? -1 : blockStartingAt(previous, start)
  if (block < 0) return -1
  const records = previous.recordEnd[block] - start
  if (r + records > origins.length) return -1
  for (let k = 1; k < records; k++) if (origins[r + k] !== start + k + 1) return -1
  return block
}

/** The new index as runs: the previous blocks it repeats, and the fresh records around them. */
function planRuns(lines: StoredLines, previous: SnapshotMemory, origins: Uint32Array): Run[] {
  const runs: Run[] = []
  let fresh = -1
  const closeFresh = (end: number) => {
    if (fresh >= 0) runs.push(freshRun(lines, fresh, end))
    fresh = -1
  }
  for (let r = 0; r < lines.size;) {
    const block = reusableBlock(previous, origins, r)
    if (block < 0) {
      if (fresh < 0) fresh = r
      r++
      continue
    }
    closeFresh(r)
    const end = r + previous.recordEnd[block] - blockStart(previous, block)
    runs.push({ first: r, end, block, bytes: lines.bytes(r, end) })
    r = end
  }
  closeFresh(lines.size)
  return runs
}

/**
 * Fresh runs under `least` bytes take in a neighbouring run (the next one; the one before for the
 * last run), compressing it again. Otherwise a record added between two unchanged blocks, or a few
 * appended at the end, would stay a tiny block at every later refresh, and tiny blocks would pile
 * up refresh after refresh; this way every block made holds at least `least` bytes (unless the
 * whole index holds fewer), and one change costs at most about two blocks.
 */
function absorbSmallRuns(runs: Run[], least: number): Run[] {
  const merged: Run[] = []
  const join = (into: Run, run: Run) => Object.assign(into, { end: run.end, block: -1, bytes: into.bytes + run.bytes })
  for (const run of runs) {
    const last = merged.at(-1)
    if (last && last.block < 0 && (run.block < 0 || last.bytes < least)) join(last, run)
    else merged.push({ ...run })
  }
  for (let tail = merged.at(-1); tail && tail.block < 0 && tail.bytes < least && merged.length > 1;) {
    merged.pop()
    tail = join(merged.at(-1)!, tail)
  }
  return merged
}

/**
 * A fresh run cut into blocks as even as its records allow, about `target` bytes each (between half
 * and one and a half of it): cut at exactly `target`, a run slightly over would leave a sliver.
 */
function* freshBlocks(run: Run, lines: StoredLines, target: number): Iterable<[number, number]> {
  const blocks = Math.max(1, Math.round(run.bytes / target))
  let first = run.first
  let used = 0
  let made = 0
  for (let r = run.first; r < run.end; r++) {
    used += lines.bytes(r, r + 1)
    if (used * blocks < run.bytes * (made + 1) && r + 1 < run.end) continue
    yield [first, r + 1]
    first = r + 1
    made++
  }
}

/** Gathers gzip members block by block; `finish` lays them out as the snapshot and its memory. */
class MemberWriter {
  private readonly members: Uint8Array[] = []
  private used = 0
  private readonly memberEnd = new U32List()
  private readonly recordEnd = new U32List()

  /** The member of the next block, which ends before record `end`. */
  add(member: Uint8Array, end: number): void {
    this.members.push(member)
    this.used += member.length
    this.memberEnd.push(this.used)
    this.recordEnd.push(end)
  }

  table(): { memberEnd: number[]; recordEnd: number[] } {
    return {
      memberEnd: Array.from(this.memberEnd.data.subarray(0, this.memberEnd.length)),
      recordEnd: Array.from(this.recordEnd.data.subarray(0, this.recordEnd.length)),
    }
  }

  finish(header: Uint8Array): { bytes: Uint8Array; memory: SnapshotMemory } {
    // The snapshot in a buffer of its own (it is transferred); the memory's copy in shared memory.
    const bytes = new Uint8Array(header.length + this.used)
    bytes.set(header)
    let at = header.length
    for (const member of this.members) {
      bytes.set(member, at)
      at += member.length
    }
    const members = new Uint8Array(new SharedArrayBuffer(this.used))
    members.set(bytes.subarray(header.length))
    return { bytes, memory: { members, memberEnd: this.memberEnd.shared(), recordEnd: this.recordEnd.shared() } }
  }
}
