import type { AdvisoryFeedRepository, AdvisoryFeedState } from '../../storage/repositories/advisory-feed'
import type { Lease } from '../../storage/repositories/leases'
import { logger } from '../app/logger'
import type { LoadMemory } from './load-memory'
import type { Pace } from './pace'
import type { PackedAdvisoryIndex } from './packed-index'
import type { Ecosystem } from '../firewall/schema'
import { inThreadLoader, type ArchiveLoader, type LoadedArchive } from './archive-loader'
import { storeArchive, type ArchiveOrigin, type FeedSyncReport } from './archive-store'
import { FEED_HEADERS_TIMEOUT_MS, FEED_IDLE_TIMEOUT_MS } from './feed-client'
import { LEASE_TTL_MS } from './feed-schedule'
import { feedArchiveUrl } from './settings'
import { RefreshRefused, refreshRefusal } from './refresh-guard'
import { observeAdvisoryRefusal } from '../observability/metrics'

export const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300)

/**
 * Runs `work` while holding `lease` (renewed meanwhile), or returns null at once when another
 * owner holds it.
 * @example const report = await withLease(lease, owner, () => download(...))
 */
export async function withLease<T>(lease: Lease, owner: string, work: () => Promise<T>): Promise<T | null> {
  if (!(await lease.acquire(owner, LEASE_TTL_MS))) return null
  const renew = setInterval(() => void lease.acquire(owner, LEASE_TTL_MS).catch(() => false), LEASE_TTL_MS / 3)
  renew.unref()
  try {
    return await work()
  } finally {
    clearInterval(renew)
    await lease.release(owner).catch(() => undefined)
  }
}

/** What a download needs; the caller owns the index it swaps in. */
export interface DownloadContext {
  repository: AdvisoryFeedRepository
  /** ADVISORY_FEED_URL (not null here) and its hash, kept in the state. */
  url: string
  urlHash: string | undefined
  /** Where the archive is downloaded and read: default this thread, paced. */
  loader?: ArchiveLoader
  pace: () => Pace | undefined
  /** Aborts of the downloads in flight, for stop(). */
  downloads: Set<() => void>
  stopped: () => boolean
  /** `ADVISORY_MAX_ENTRIES`. */
  maxEntries?: number
}

/** The snapshot this process holds and the one that failed to load here. */
interface HeldSnapshot {
  snapshotId: string | null
  broken: string | null
  /** Whether this process serves data of the ecosystem (for the log of a failure). */
  loaded: boolean
  /** The memory of the archive load it serves (null after loading a stored snapshot). */
  memory: LoadMemory | null
}

/** A download's outcome: the report, the state now stored, and a new index to swap in (when loaded). */
export interface DownloadResult {
  report: FeedSyncReport
  /** Absent when nothing was recorded (stopped meanwhile). */
  state?: AdvisoryFeedState
  loaded?: { index: PackedAdvisoryIndex; memory: LoadMemory; snapshotId: string }
}

/**
 * One conditional download of the ecosystem's archive (the caller holds the lease), made and read
 * by the loader (on its thread in the service): a 304 only records the refresh; a new archive is
 * read into a new index and stored as the snapshot; a failure is recorded as `lastError` and the
 * data loaded before stays.
 */
export async function downloadFeed(
  ctx: DownloadContext,
  ecosystem: Ecosystem,
  state: AdvisoryFeedState | null,
  held: HeldSnapshot,
  at: string,
): Promise<DownloadResult> {
  const { repository } = ctx
  const id = state?.snapshotId
  // Ask conditionally only while the data the validators stand for is really there.
  const intact =
    !!id &&
    state!.urlHash === ctx.urlHash &&
    id !== held.broken &&
    (id === held.snapshotId || (await repository.hasSnapshot(ecosystem, id)))
  const validators = intact ? { etag: state!.etag, lastModified: state!.lastModified } : {}
  const request = {
    url: feedArchiveUrl(ctx.url, ecosystem),
    validators,
    headersTimeoutMs: FEED_HEADERS_TIMEOUT_MS,
    idleTimeoutMs: FEED_IDLE_TIMEOUT_MS,
    ...(ctx.maxEntries !== undefined ? { maxEntries: ctx.maxEntries } : {}),
  }
  const controller = new AbortController()
  const abort = () => controller.abort()
  ctx.downloads.add(abort)
  const started = Date.now()
  try {
    const options = { pace: ctx.pace(), previous: held.memory, signal: controller.signal }
    const answer = await (ctx.loader ?? inThreadLoader).download(request, options)
    if (answer.kind === 'not-modified') {
      const next: AdvisoryFeedState = { ...state!, lastAttempt: at, lastRefresh: at, lastError: null }
      await repository.saveState(next)
      logger.info('advisory feed unchanged', { ecosystem, records: next.records })
      return { report: { ecosystem, outcome: 'unchanged', records: next.records }, state: next }
    }
    const { etag, lastModified, loaded } = answer
    const origin = { origin: 'feed' as const, urlHash: ctx.urlHash, etag, lastModified }
    return await storeLoaded(repository, ecosystem, state, { loaded, started }, origin, at)
  } catch (error) {
    if (ctx.stopped()) return { report: { ecosystem, outcome: 'failed', error: 'stopped' } }
    const base = state ?? { ecosystem, records: 0, invalid: 0, withdrawn: 0 }
    const message = errorText(error)
    if (error instanceof RefreshRefused || (error instanceof Error && /ADVISORY_MAX_ENTRIES/.test(error.message)))
      observeAdvisoryRefusal(ecosystem, 'feed')
    const next: AdvisoryFeedState = { ...base, lastAttempt: at, lastError: { at, message } }
    await repository.saveState(next).catch(() => undefined)
    logger.warn('advisory feed refresh failed; the data loaded before stays', {
      ecosystem,
      error: message,
      loaded: held.loaded,
    })
    return { report: { ecosystem, outcome: 'failed', error: message }, state: next }
  } finally {
    ctx.downloads.delete(abort)
  }
}

/** Stores an archive read (downloaded or imported) as the snapshot, with the index to swap in. */
export async function storeLoaded(
  repository: AdvisoryFeedRepository,
  ecosystem: Ecosystem,
  previous: AdvisoryFeedState | null,
  read: { loaded: LoadedArchive; started: number },
  origin: ArchiveOrigin,
  at: string,
): Promise<DownloadResult> {
  const { loaded, started } = read
  // The data served stays when the new archive is empty, mostly invalid or much smaller.
  const refusal = refreshRefusal(loaded, previous?.snapshotId ? previous.records : null, true)
  if (refusal) throw new RefreshRefused(refusal)
  const stored = await storeArchive({ repository, ecosystem, previous, loaded, started, origin, at })
  return {
    report: stored.report,
    state: stored.state,
    loaded: { index: stored.index, memory: stored.memory, snapshotId: stored.state.snapshotId! },
  }
}
