import { DirectoryLoad, type FeedLoadResult } from './feed-load'
import type { LoadMemory } from './load-memory'
import type { Pace } from './pace'
import {
  directoryPlace,
  END_SEARCH_BYTES,
  entryData,
  entryEnds,
  readDirectory,
  ZipDirectoryError,
  type Directory,
} from './zip-directory'
import { fetchFeed, FeedError, type ContentRange, type FeedAnswer, type FeedRequest } from './feed-client'

/**
 * A refresh by ranges: a feed archive of 200,000 records where a few changed is read as its last
 * bytes, its central directory and the changed entries, not as 60-odd MB. The first request is
 * conditional as a whole download is (a 304 costs the same); the later ones ask for that same
 * version (`If-Match`) and are checked against it. Whatever does not fit (a server without ranges,
 * an archive changed meanwhile, too many changes, a directory this reader cannot take) falls back to
 * the whole archive read as a stream, which remains the reference.
 */

/** Changed entries fetched as one range when they lie closer than this. */
const MERGE_GAP_BYTES = 64 * 1024
/** More ranges than this, or changed bytes over this share of the archive: read it whole. */
const MAX_RANGES = 64
const MAX_CHANGED_SHARE = 0.25
/** The directory must be smaller than this share of the archive to be worth a range of its own. */
const MAX_DIRECTORY_SHARE = 0.5

export type RangedOutcome =
  | { kind: 'not-modified' }
  | { kind: 'changed'; etag?: string; lastModified?: string; loaded: FeedLoadResult; ranges: number }
  /** Read the archive whole: `answer` when the server already sent it, else a fresh download. */
  | { kind: 'whole'; answer?: Extract<FeedAnswer, { kind: 'changed' }>; reason: string }

/** The version every range after the first must come from. */
interface Version {
  etag?: string
  lastModified?: string
  total: number
}

class Mismatch extends Error {}

/** The body of a 206, whole: the `expected` bytes its Content-Range announced, never more. */
async function bytesOf(body: AsyncIterable<Uint8Array>, expected: number): Promise<Buffer> {
  const parts: Buffer[] = []
  let length = 0
  for await (const chunk of body) {
    length += chunk.byteLength
    if (length > expected) throw new Mismatch('range answered with more bytes than it holds')
    parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
  }
  if (length !== expected) throw new Mismatch('range cut short')
  return parts.length === 1 ? parts[0] : Buffer.concat(parts)
}

/** Bytes `start` to `end` (exclusive) of the same version; `Mismatch` when the server answers otherwise. */
async function rangeOf(
  request: FeedRequest,
  version: Version,
  start: number,
  end: number,
  signal?: AbortSignal,
): Promise<Buffer> {
  const answer = await fetchFeed(
    { ...request, validators: {}, range: `bytes=${start}-${end - 1}`, ifMatch: version.etag },
    signal,
  ).catch((error: unknown) => {
    // 412: the archive changed since the first range.
    if (error instanceof FeedError && /answered 412$/.test(error.message)) throw new Mismatch('archive changed')
    throw error
  })
  if (answer.kind !== 'changed') throw new Mismatch('range answered 304')
  if (!answer.part) {
    await answer.cancel()
    throw new Mismatch('range not honoured')
  }
  const same =
    answer.part.total === version.total &&
    (answer.etag ?? version.etag) === version.etag &&
    (answer.lastModified ?? version.lastModified) === version.lastModified
  if (!same || answer.part.start !== start || answer.part.end !== end - 1) {
    await answer.cancel()
    throw new Mismatch(same ? 'another range answered' : 'archive changed')
  }
  return bytesOf(answer.body, end - start)
}

/** Spans of the archive holding the wanted entries, merged when close; null when too many. */
function spansFor(
  directory: Directory,
  wanted: number[],
  ends: Float64Array,
  archiveBytes: number,
): { start: number; end: number; members: number[] }[] | null {
  const offsets = directory.localOffset
  const order = [...wanted].sort((a, b) => offsets[a] - offsets[b])
  const spans: { start: number; end: number; members: number[] }[] = []
  let bytes = 0
  for (const i of order) {
    const start = offsets[i]
    const end = ends[i]
    bytes += end - start
    const last = spans.at(-1)
    if (last && start - last.end <= MERGE_GAP_BYTES) {
      last.end = Math.max(last.end, end)
      last.members.push(i)
    } else spans.push({ start, end, members: [i] })
    if (spans.length > MAX_RANGES) return null
  }
  return bytes > archiveBytes * MAX_CHANGED_SHARE ? null : spans
}

/**
 * One conditional refresh by ranges against the load whose memory is `previous`.
 * @example const outcome = await downloadByRanges(request, held.memory, { signal })
 */
export async function downloadByRanges(
  request: FeedRequest,
  previous: LoadMemory,
  options: { pace?: Pace; signal?: AbortSignal } = {},
): Promise<RangedOutcome> {
  const { signal } = options
  const first = await fetchFeed({ ...request, range: `bytes=-${END_SEARCH_BYTES}` }, signal)
  if (first.kind === 'not-modified') return first
  if (!first.part) return { kind: 'whole', answer: first, reason: 'ranges not supported' }
  const version: Version = { etag: first.etag, lastModified: first.lastModified, total: first.part.total }
  if (!version.etag && !version.lastModified) {
    await first.cancel()
    return { kind: 'whole', reason: 'no validator to hold the version' }
  }
  try {
    const tail = await bytesOf(first.body, first.part.end + 1 - first.part.start)
    return await fromDirectory(request, previous, version, tail, first.part, options)
  } catch (error) {
    if (error instanceof Mismatch || error instanceof ZipDirectoryError) return { kind: 'whole', reason: error.message }
    throw error
  }
}

async function fromDirectory(
  request: FeedRequest,
  previous: LoadMemory,
  version: Version,
  tail: Buffer,
  part: ContentRange,
  options: { pace?: Pace; signal?: AbortSignal },
): Promise<RangedOutcome> {
  const { total } = version
  if (part.end !== total - 1) throw new Mismatch('the last bytes were not answered')
  const place = directoryPlace(tail, total)
  const tailStart = total - tail.length
  if (place.size > total * MAX_DIRECTORY_SHARE) throw new Mismatch('directory too large for ranges')
  const directory =
    place.offset >= tailStart
      ? tail.subarray(place.offset - tailStart, place.offset - tailStart + place.size)
      : await rangeOf(request, version, place.offset, place.offset + place.size, options.signal)
  const entries = readDirectory(directory, place)
  const plan = new DirectoryLoad(entries, { previous, pace: options.pace, maxEntries: request.maxEntries })
  const spans = spansFor(entries, plan.wanted, entryEnds(entries, place.offset), total)
  if (!spans) throw new Mismatch('too many changes for ranges')
  const compressed = new Map<number, Buffer>()
  for (const span of spans) {
    const bytes = await rangeOf(request, version, span.start, span.end, options.signal)
    for (const i of span.members) compressed.set(i, entryData(bytes, span.start, entries, i))
  }
  const loaded = await plan.load((i) => compressed.get(i)!)
  const ranges = 1 + (place.offset >= tailStart ? 0 : 1) + spans.length
  return { kind: 'changed', etag: version.etag, lastModified: version.lastModified, loaded, ranges }
}
