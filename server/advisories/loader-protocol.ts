import type { PackedIndexData } from '../firewall/advisories/packed-index'

/**
 * Messages to the advisory loader thread: an archive's bytes in order, then its end; or a stored
 * snapshot to read back.
 */
export type LoaderRequest =
  { type: 'chunk'; bytes: Uint8Array } | { type: 'end' } | { type: 'snapshot'; bytes: Uint8Array }

/** Messages from it: one `ack` per chunk read, then the packed index and snapshot, or why not. */
export type LoaderReply =
  | { type: 'ack' }
  | {
      type: 'done'
      data: PackedIndexData
      snapshot: Uint8Array
      records: number
      invalid: number
      withdrawn: number
      warnings: string[]
    }
  | { type: 'failed'; message: string }
