import { loadOsvZip, type FeedLoadResult } from '../firewall/advisories/feed-load'
import type { LoadMemory } from '../firewall/advisories/load-memory'
import type { Pace } from '../firewall/advisories/pace'
import { encodeSnapshot } from '../firewall/advisories/snapshot'
import { fetchFeed, type FeedRequest } from './feed-client'

/** An archive read into a new index (feed-load.ts's figures and memory) with its snapshot. */
export type LoadedArchive = Omit<FeedLoadResult, 'origins'> & { snapshot: Uint8Array }

/**
 * The loader's archive job, wherever it runs: reads an archive into an index (passing over what
 * `previous` already holds) and compresses the snapshot other processes load.
 * @example const loaded = await readArchive(body, pacer(), held.memory)
 */
export async function readArchive(
  source: AsyncIterable<Uint8Array>,
  pace?: Pace,
  previous?: LoadMemory | null,
): Promise<LoadedArchive> {
  const loaded = await loadOsvZip(source, { pace, previous })
  // A buffer of its own: a small result may sit in Node's shared Buffer pool, and it is transferred.
  const snapshot = new Uint8Array(await encodeSnapshot(loaded.index, pace))
  const { index, records, invalid, withdrawn, warnings, reused, memory } = loaded
  return { index, snapshot, records, invalid, withdrawn, warnings, reused, memory }
}

/** A conditional download's outcome: unchanged, or the new archive read, with its validators. */
export type FeedOutcome =
  { kind: 'not-modified' } | { kind: 'changed'; etag?: string; lastModified?: string; loaded: LoadedArchive }

/**
 * The loader's download job, wherever it runs: fetches the feed archive and streams the body
 * straight into `readArchive`. Throws a `FeedError` when the download fails, the zip reader's error
 * when the archive cannot be read.
 * @example const outcome = await downloadArchive(request, { previous: held.memory })
 */
export async function downloadArchive(
  request: FeedRequest,
  options: { pace?: Pace; previous?: LoadMemory | null; signal?: AbortSignal } = {},
): Promise<FeedOutcome> {
  const answer = await fetchFeed(request, options.signal)
  if (answer.kind === 'not-modified') return answer
  const loaded = await readArchive(answer.body, options.pace, options.previous)
  return { kind: 'changed', etag: answer.etag, lastModified: answer.lastModified, loaded }
}
