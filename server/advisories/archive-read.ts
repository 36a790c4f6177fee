import { loadOsvZip, type FeedLoadResult } from './feed-load'
import type { LoadMemory } from './load-memory'
import type { Pace } from './pace'
import { encodeSnapshotReusing } from './snapshot-blocks'
import { fetchFeed, type FeedRequest } from './feed-client'
import { downloadByRanges } from './feed-ranges'

/**
 * An archive read into a new index (feed-load.ts's figures and memory) with its snapshot; `ranges`
 * is how many range requests read it (0: read whole).
 */
export type LoadedArchive = Omit<FeedLoadResult, 'origins'> & { snapshot: Uint8Array; ranges: number }

/**
 * A load's result with its snapshot compressed (the snapshot other processes load): the blocks of
 * records unchanged since the previous load are its snapshot's blocks, not compressed again.
 */
async function withSnapshot(
  loaded: FeedLoadResult,
  ranges: number,
  pace?: Pace,
  previous?: LoadMemory | null,
): Promise<LoadedArchive> {
  const encoded = await encodeSnapshotReusing(loaded.index, {
    previous: previous?.snapshot,
    origins: loaded.origins,
    pace,
  })
  const snapshot = encoded.bytes
  const { index, records, invalid, withdrawn, warnings, reused } = loaded
  const memory = { ...loaded.memory, snapshot: encoded.memory }
  return { index, snapshot, records, invalid, withdrawn, warnings, reused, memory, ranges }
}

/**
 * The loader's archive job, wherever it runs: reads an archive into an index (passing over what
 * `previous` already holds) and compresses the snapshot other processes load.
 * @example const loaded = await readArchive(body, pacer(), held.memory)
 */
export async function readArchive(
  source: AsyncIterable<Uint8Array>,
  pace?: Pace,
  previous?: LoadMemory | null,
  maxEntries?: number,
): Promise<LoadedArchive> {
  return withSnapshot(await loadOsvZip(source, { pace, previous, maxEntries }), 0, pace, previous)
}

/** A conditional download's outcome: unchanged, or the new archive read, with its validators. */
export type FeedOutcome =
  { kind: 'not-modified' } | { kind: 'changed'; etag?: string; lastModified?: string; loaded: LoadedArchive }

/**
 * The loader's download job, wherever it runs: fetches the feed archive and reads it. With the
 * previous load's memory it asks for ranges first (the directory and the changed entries, see
 * feed-ranges.ts); otherwise, or when ranges do not fit, it streams the whole body straight into
 * `readArchive`. Throws a `FeedError` when the download fails, the zip reader's error when the
 * archive cannot be read.
 * @example const outcome = await downloadArchive(request, { previous: held.memory })
 */
export async function downloadArchive(
  request: FeedRequest,
  options: { pace?: Pace; previous?: LoadMemory | null; signal?: AbortSignal } = {},
): Promise<FeedOutcome> {
  const { previous, pace, signal } = options
  const answer = previous ? await downloadByRanges(request, previous, { pace, signal }) : null
  if (answer?.kind === 'not-modified') return answer
  if (answer?.kind === 'changed') {
    const { etag, lastModified, loaded, ranges } = answer
    return { kind: 'changed', etag, lastModified, loaded: await withSnapshot(loaded, ranges, pace, previous) }
  }
  // After a first range the archive is known to have changed: the whole of it, unconditionally.
  const whole = answer?.answer ?? (await fetchFeed(answer ? { ...request, validators: {} } : request, signal))
  if (whole.kind === 'not-modified') return whole
  const loaded = await readArchive(whole.body, pace, previous, request.maxEntries)
  return { kind: 'changed', etag: whole.etag, lastModified: whole.lastModified, loaded }
}
