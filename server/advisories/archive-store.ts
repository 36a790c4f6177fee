import { randomBytes } from 'node:crypto'
import type { AdvisoryFeedRepository, AdvisoryFeedState } from '../../storage/repositories/advisory-feed'
import { logger } from '../app/logger'
import type { LoadMemory } from './load-memory'
import type { PackedAdvisoryIndex } from './packed-index'
import type { LoadedArchive } from './archive-read'
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
  /** Range requests that read the archive (absent or 0: read whole). */
  ranges?: number
  error?: string
}

/** Where an archive came from: the feed (with its validators) or a file the admin CLI imported. */
export type ArchiveOrigin = Pick<AdvisoryFeedState, 'origin' | 'urlHash' | 'etag' | 'lastModified'>

interface StoreArchiveInput {
  repository: AdvisoryFeedRepository
  ecosystem: Ecosystem
  /** The state before: its snapshot is deleted once the new one is stored. */
  previous: AdvisoryFeedState | null
  /** The archive, read by the loader. */
  loaded: LoadedArchive
  origin: ArchiveOrigin
  /** When the refresh started (ISO). */
  at: string
  /** When reading it started (Date.now()), for the log. */
  started: number
}

/**
 * Stores an archive read into a new index as the ecosystem's snapshot and then its state (so a
 * reader that sees the state finds the snapshot), and deletes the snapshot it replaces.
 * @example const { index, state } = await storeArchive({ repository, ecosystem: 'npm', loaded, ... })
 */
export async function storeArchive(input: StoreArchiveInput): Promise<{
  index: PackedAdvisoryIndex
  memory: LoadMemory
  state: AdvisoryFeedState
  report: FeedSyncReport
}> {
  const { repository, ecosystem, previous, origin, at, loaded, started } = input
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
  const figures = {
    records,
    invalid,
    withdrawn,
    reused: loaded.reused,
    ranges: loaded.ranges,
    bytes: bytes.length,
    ms: Date.now() - started,
  }
  logger.info('advisory feed loaded', { ecosystem, origin: origin.origin, ...figures })
  for (const warning of loaded.warnings.slice(0, 5)) logger.warn('advisory record skipped', { ecosystem, warning })
  const report: FeedSyncReport = {
    ecosystem,
    outcome: 'loaded',
    records,
    invalid,
    withdrawn,
    reused: loaded.reused,
    ranges: loaded.ranges,
  }
  return { index: loaded.index, memory: loaded.memory, state, report }
}
