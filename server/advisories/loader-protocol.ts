import type { LoadMemory } from './load-memory'
import type { PackedIndexData } from './packed-index'
import type { FollowMemory } from './snapshot-follow'
import type { FeedRequest } from './feed-client'
import type { LoadedArchive } from './archive-read'

/** The loader thread's workerData. */
export interface LoaderStart {
  /** False: keep the process's CPU priority (the benchmark compares). */
  lowPriority: boolean
  /** The memory of the load served now (shared memory, not copied), or null for a full read. */
  previous: LoadMemory | null
  /** The thread downloads this archive itself; absent: it reads the chunks it is sent (or a snapshot). */
  download?: FeedRequest
  /** For a snapshot: what the load of the index served now left (its blocks are not read again). */
  followed?: FollowMemory | null
  /** For an archive it is sent: `ADVISORY_MAX_ENTRIES` (a download carries it in its request). */
  maxEntries?: number
}

/**
 * Messages to the advisory loader thread: an archive's bytes in order, then its end; or a stored
 * snapshot to read back. A download needs none: it is in the `LoaderStart`.
 */
export type LoaderRequest =
  { type: 'chunk'; bytes: Uint8Array } | { type: 'end' } | { type: 'snapshot'; bytes: Uint8Array }

/** An archive read: its index, snapshot, figures and memory (shared memory, the snapshot moved). */
export type ArchiveReply = Omit<LoadedArchive, 'index'> & {
  type: 'archive'
  /** The index as shared memory (its class does not cross threads). */
  data: PackedIndexData
  /** The answer's validators, when the thread downloaded the archive. */
  etag?: string
  lastModified?: string
}

/**
 * Messages from it: one `ack` per chunk read, then the archive (or a snapshot's index); for a
 * download, `not-modified` or the archive; or why not.
 */
export type LoaderReply =
  | { type: 'ack' }
  | ArchiveReply
  | { type: 'not-modified' }
  | { type: 'snapshot'; data: PackedIndexData; memory: FollowMemory | null; reusedBlocks: number }
  | { type: 'failed'; message: string }
