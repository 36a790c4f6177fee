import type { LoadMemory } from '../firewall/advisories/load-memory'
import type { PackedIndexData } from '../firewall/advisories/packed-index'

/** The loader thread's workerData. */
export interface LoaderStart {
  /** False: keep the process's CPU priority (the benchmark compares). */
  lowPriority: boolean
  /** The memory of the load served now (shared memory, not copied), or null for a full read. */
  previous: LoadMemory | null
}

/**
 * Messages to the advisory loader thread: an archive's bytes in order, then its end; or a stored
 * snapshot to read back.
 */
export type LoaderRequest =
  { type: 'chunk'; bytes: Uint8Array } | { type: 'end' } | { type: 'snapshot'; bytes: Uint8Array }

/** Messages from it: one `ack` per chunk read, then the archive's index, snapshot and memory (or a snapshot's index), or why not. */
export type LoaderReply =
  | { type: 'ack' }
  | {
      type: 'archive'
      data: PackedIndexData
      snapshot: Uint8Array
      records: number
      invalid: number
      withdrawn: number
      warnings: string[]
      reused: number
      memory: LoadMemory
    }
  | { type: 'snapshot'; data: PackedIndexData }
  | { type: 'failed'; message: string }
