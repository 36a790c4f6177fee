import { randomBytes } from 'node:crypto'
import type { AdvisoryFeedRepository, AdvisoryFeedState } from '../../storage/repositories/advisory-feed'
import { logger } from '../app/logger'
import type { LoadMemory } from '../firewall/advisories/load-memory'
import type { Pace } from '../firewall/advisories/pace'
import type { PackedAdvisoryIndex } from '../firewall/advisories/packed-index'
import { inThreadLoader, type ArchiveLoader } from './archive-loader'
import type { Ecosystem } from '../firewall/schema'

/** The outcome of one refresh or import, for logs and the admin CLI. */
export interface FeedSyncReport {
  ecosystem: Ecosystem
  outcome: 'loaded' | 'unchanged' | 'failed' | 'busy'
  records?: number
  invalid?: number
  withdrawn?: number
  /** Archive entries taken unread from the previous load (unchanged since). */
  reused?: number
  error?: string
}

/** Where an archive came from: the feed (with its validators) or a file the admin CLI imported. */
export type ArchiveOrigin = Pick<AdvisoryFeedState, 'origin' | 'urlHash' | 'etag' | 'lastModified'>

interface StoreArchiveInput {
  repository: AdvisoryFeedRepository
  ecosystem: Ecosystem
  /** The state before: its snapshot is deleted once the new one is stored. */
  previous: AdvisoryFeedState | null
  source: AsyncIterable<Uint8Array>
  origin: ArchiveOrigin
  /** When the refresh started (ISO). */
  at: string
  pace?: () => Pace | undefined
  /** Where the archive is read: default this thread, paced. */
  load?: ArchiveLoader
  /** The memory of the load this process serves now: unchanged entries are not read again. */
  memory?: LoadMemory | null
}

/**
 * Reads an archive into a new index, stores it as the ecosystem's snapshot and then its state (so
 * a reader that sees the state finds the snapshot), and deletes the snapshot it replaces. Throws
 * when the archive cannot be read; nothing is stored then.
 * @example const { index, state } = await storeArchive({ repository, ecosystem: 'npm', ... })
 */
export async function storeArchive(input: StoreArchiveInput): Promise<{
  index: PackedAdvisoryIndex
  memory: LoadMemory
  state: AdvisoryFeedState
  report: FeedSyncReport
}> {
  const { repository, ecosystem, previous, origin, at } = input
  const started = Date.now()
  const loaded = await (input.load ?? inThreadLoader).archive(input.source, input.pace?.(), input.memory)
  const bytes = loaded.snapshot
  const snapshotId = `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`
  await repository.saveSnapshot(ecosystem, snapshotId, bytes)
  const { records, invalid, withdrawn } = loaded
  const state: AdvisoryFeedState = {
    ecosystem,
    ...Object.fromEntries(Object.entries(origin).filter(([, value]) => value !== undefined)),
    snapshotId,
    records,
    invalid,
    withdrawn,
    lastAttempt: at,
    lastRefresh: at,
    lastChange: at,
    lastError: null,
  }
  await repository.saveState(state)
  if (previous?.snapshotId && previous.snapshotId !== snapshotId) {
    await repository.deleteSnapshot(ecosystem, previous.snapshotId).catch(() => undefined)
  }
  const figures = { records, invalid, withdrawn, reused: loaded.reused, bytes: bytes.length, ms: Date.now() - started }
  logger.info('advisory feed loaded', { ecosystem, origin: origin.origin, ...figures })
  for (const warning of loaded.warnings.slice(0, 5)) logger.warn('advisory record skipped', { ecosystem, warning })
  const report: FeedSyncReport = { ecosystem, outcome: 'loaded', records, invalid, withdrawn, reused: loaded.reused }
  return { index: loaded.index, memory: loaded.memory, state, report }
}
