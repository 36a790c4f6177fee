import { createHash } from 'node:crypto'
import type { AdvisoryFeedRepository, AdvisoryFeedState } from '../../storage/repositories/advisory-feed'
import type { Lease } from '../../storage/repositories/leases'
import { logger } from '../app/logger'
import { isoTime, type Clock } from '../common/clock'
import { pacer, type Pace } from '../firewall/advisories/pace'
import type { AdvisoryIndex } from '../firewall/advisories/types'
import { ECOSYSTEMS, type Ecosystem } from '../firewall/schema'
import { storeArchive, type ArchiveOrigin, type FeedSyncReport } from './archive-store'
import { inThreadLoader, type ArchiveLoader } from './archive-loader'
import { FeedError, httpFeedFetcher, type FeedFetcher } from './feed-client'
import { feedArchiveUrl, type AdvisoryFeedSettings } from './settings'

export type { FeedSyncReport } from './archive-store'

/** What one process holds of an ecosystem's feed, and the shared state it last read. */
export interface FeedEcosystemView {
  ecosystem: Ecosystem
  /** Data this process serves from (downloaded here or loaded from the stored snapshot). */
  index: AdvisoryIndex | null
  state: AdvisoryFeedState | null
}

export interface AdvisoryFeedOptions {
  repository: AdvisoryFeedRepository
  /** The download lease of an ecosystem (one process downloads it at a time). */
  lease: (ecosystem: Ecosystem) => Lease
  settings: AdvisoryFeedSettings
  clock: Clock
  /** This process's lease owner id. */
  owner: string
  /** Ecosystems of every firewall of every namespace: only those are downloaded. */
  ecosystemsInUse: () => Promise<Iterable<Ecosystem>>
  fetcher?: FeedFetcher
  /** A pacer per job; default 2 ms slices (the CLI passes none: nothing else waits there). */
  pace?: () => Pace
  /** Where archives are read (a worker thread in the service); default this thread, paced. */
  loader?: ArchiveLoader
  /** Called after an index was swapped in. */
  onChange?: () => void
  /** Timer seam; returns a cancel function. */
  every?: (run: () => void, ms: number) => () => void
}

/** A failed download is tried again after this (or ADVISORY_REFRESH when shorter). */
const ERROR_RETRY_MS = 60_000
/** Processes look for a snapshot another one stored at least this often. */
const POLL_MAX_MS = 15_000
/** While another process downloads data this one lacks, its snapshot is looked for this often. */
const BUSY_RETRY_MS = 1_000
/** How often the ecosystems of all firewalls are listed again (a lookup that misses asks at once). */
const IN_USE_MAX_MS = 60_000
/** The download lease, renewed while the download runs; a dead holder is replaced after it. */
const LEASE_TTL_MS = 60_000

interface Local {
  index: AdvisoryIndex | null
  snapshotId: string | null
  /** A stored snapshot that failed to load here: not retried, and not trusted for a 304. */
  broken: string | null
  state: AdvisoryFeedState | null
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300)

/**
 * Keeps the OSV feed of every ecosystem in use loaded. Every `ADVISORY_REFRESH` one process
 * (holding the ecosystem's lease) makes a conditional request; a new archive is read as a
 * stream into a new index beside the old one, stored as a compressed snapshot and swapped in.
 * The other processes load that snapshot when its id changes. A failed download keeps the old
 * data and is recorded as the ecosystem's `lastError`.
 */
export class AdvisoryFeed {
  private readonly local = new Map<Ecosystem, Local>()
  private readonly wanted = new Set<Ecosystem>()
  private readonly fetcher: FeedFetcher
  private readonly urlHash: string | undefined
  private inUse: Set<Ecosystem> | null = null
  private inUseAt = 0
  private running: Promise<void> | null = null
  private again = false
  private cancel: (() => void) | null = null
  private started = false
  private stopped = false
  private readonly downloads = new Set<() => void>()
  private soonTimer: NodeJS.Timeout | undefined

  constructor(private readonly options: AdvisoryFeedOptions) {
    this.fetcher = options.fetcher ?? httpFeedFetcher()
    const url = options.settings.url
    this.urlHash = url ? createHash('sha256').update(url).digest('base64url').slice(0, 22) : undefined
  }

  /** The ecosystem's data held here, or null when none is loaded yet. */
  index(ecosystem: Ecosystem): AdvisoryIndex | null {
    return this.local.get(ecosystem)?.index ?? null
  }

  view(): FeedEcosystemView[] {
    return ECOSYSTEMS.map((ecosystem) => {
      const local = this.local.get(ecosystem)
      return { ecosystem, index: local?.index ?? null, state: local?.state ?? null }
    })
  }

  /**
   * A lookup needed data of `ecosystem` that is not loaded (a firewall of a new ecosystem): pass
   * again now rather than at the next scheduled one.
   */
  want(ecosystem: Ecosystem): void {
    if (this.wanted.has(ecosystem)) return
    this.wanted.add(ecosystem)
    if (this.started) this.kick()
  }

  /** Loads the snapshots already stored (start-up, before serving); downloads nothing. */
  async loadStored(): Promise<void> {
    await this.pass(false)
  }

  /** Passes now and then every min(ADVISORY_REFRESH, 15 s): follow snapshots, download when due. */
  start(): void {
    if (this.started || this.stopped) return
    this.started = true
    const every = this.options.every ?? defaultEvery
    this.cancel = every(() => this.kick(), Math.min(this.options.settings.refreshMs, POLL_MAX_MS))
    this.kick()
  }

  /** One pass now (follow snapshots, download what is due) and its end; tests and tools wait on it. */
  async runPass(): Promise<void> {
    await this.idle()
    this.kick()
    await this.idle()
  }

  /** Resolves when the pass running now (and one requested meanwhile) is over. */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  private kick(): void {
    if (this.stopped) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = (async () => {
      do {
        this.again = false
        await this.pass(true).catch((error) => logger.error('advisory feed pass failed', { error: errorText(error) }))
      } while (this.again && !this.stopped)
    })().finally(() => (this.running = null))
  }

  private slot(ecosystem: Ecosystem): Local {
    let local = this.local.get(ecosystem)
    if (!local) this.local.set(ecosystem, (local = { index: null, snapshotId: null, broken: null, state: null }))
    return local
  }

  private pace(): Pace | undefined {
    return this.options.pace ? this.options.pace() : undefined
  }

  private async ecosystems(): Promise<Ecosystem[]> {
    const now = this.options.clock.now()
    if (!this.inUse || now - this.inUseAt >= Math.min(this.options.settings.refreshMs, IN_USE_MAX_MS)) {
      try {
        this.inUse = new Set(await this.options.ecosystemsInUse())
        this.inUseAt = now
      } catch (error) {
        const text = errorText(error)
        logger.warn('cannot list the ecosystems in use; advisory feed keeps the previous list', { error: text })
        this.inUse ??= new Set()
      }
    }
    return ECOSYSTEMS.filter((e) => this.inUse!.has(e) || this.wanted.has(e) || this.local.get(e)?.index)
  }

  private async pass(download: boolean): Promise<void> {
    const wanted = await this.ecosystems()
    // Every stored snapshot is followed: another process (or the admin CLI) stored it for a firewall
    // this process may not have listed yet. Downloads are only for the ecosystems known here.
    const states = await this.options.repository.states(ECOSYSTEMS)
    for (const ecosystem of ECOSYSTEMS) {
      if (this.stopped) return
      const state = states.get(ecosystem) ?? null
      if (!wanted.includes(ecosystem) && !state?.snapshotId) continue
      await this.follow(ecosystem, state)
      if (!download || !this.options.settings.url || !wanted.includes(ecosystem) || !this.due(ecosystem, state)) continue
      const report = await this.refreshUnderLease(ecosystem, false)
      // Another process is downloading what this one lacks: look for its snapshot again soon.
      if (report.outcome === 'busy' && !this.index(ecosystem)) this.soon()
    }
  }

  private soon(): void {
    if (this.soonTimer || this.stopped || !this.started) return
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined
      this.kick()
    }, BUSY_RETRY_MS)
    this.soonTimer.unref()
  }

  /** Takes the shared state; loads its snapshot when it is not the one held here. */
  private async follow(ecosystem: Ecosystem, state: AdvisoryFeedState | null): Promise<void> {
    const local = this.slot(ecosystem)
    local.state = state
    const id = state?.snapshotId
    if (!id || id === local.snapshotId || id === local.broken) return
    const bytes = await this.options.repository.snapshot(ecosystem, id)
    // Replaced meanwhile: the next pass reads the new state.
    if (!bytes) return
    try {
      const index = await (this.options.loader ?? inThreadLoader).snapshot(bytes, this.pace())
      this.swap(ecosystem, index, id)
      logger.info('advisory snapshot loaded', { ecosystem, records: index.size })
    } catch (error) {
      local.broken = id
      const text = errorText(error)
      logger.warn('stored advisory snapshot cannot be read; downloading the feed again', { ecosystem, error: text })
    }
  }

  private due(ecosystem: Ecosystem, state: AdvisoryFeedState | null): boolean {
    if (!state || state.urlHash !== this.urlHash) return true
    if (state.snapshotId && state.snapshotId === this.local.get(ecosystem)?.broken) return true
    const last = Date.parse(state.lastAttempt ?? '')
    if (Number.isNaN(last)) return true
    const refreshMs = this.options.settings.refreshMs
    const wait = state.lastError ? Math.min(refreshMs, ERROR_RETRY_MS) : refreshMs
    return this.options.clock.now() - last >= wait
  }

  /**
   * Downloads now, whatever the schedule (the admin CLI's `advisories sync`), still behind the
   * lease and still conditional when the stored snapshot is intact.
   */
  async sync(ecosystems: Ecosystem[]): Promise<FeedSyncReport[]> {
    if (!this.options.settings.url) {
      throw new FeedError('ADVISORY_FEED_URL is off: import an all.zip with --file instead')
    }
    const reports: FeedSyncReport[] = []
    for (const ecosystem of ecosystems) reports.push(await this.refreshUnderLease(ecosystem, true))
    return reports
  }

  /** Imports an archive from elsewhere (an air-gapped copy of all.zip); throws when it cannot be read. */
  async importArchive(ecosystem: Ecosystem, source: AsyncIterable<Uint8Array>): Promise<FeedSyncReport> {
    const report = await this.underLease(ecosystem, async () => {
      const state = await this.options.repository.state(ecosystem)
      return this.store(ecosystem, state, source, { origin: 'file' }, isoTime(this.options.clock))
    })
    return report ?? { ecosystem, outcome: 'busy' }
  }

  private async underLease<T>(ecosystem: Ecosystem, work: () => Promise<T>): Promise<T | null> {
    const { owner } = this.options
    const lease = this.options.lease(ecosystem)
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

  private async refreshUnderLease(ecosystem: Ecosystem, force: boolean): Promise<FeedSyncReport> {
    const report = await this.underLease(ecosystem, async () => {
      // Read again under the lease: another process may have refreshed a moment ago.
      const state = await this.options.repository.state(ecosystem)
      if (!force && !this.due(ecosystem, state)) {
        await this.follow(ecosystem, state)
        return null
      }
      return this.refresh(ecosystem, state)
    })
    return report ?? { ecosystem, outcome: 'busy' }
  }

  private async refresh(ecosystem: Ecosystem, state: AdvisoryFeedState | null): Promise<FeedSyncReport> {
    const { repository, settings } = this.options
    const at = isoTime(this.options.clock)
    const local = this.slot(ecosystem)
    const id = state?.snapshotId
    // Ask conditionally only while the data the validators stand for is really there.
    const intact =
      !!id &&
      state!.urlHash === this.urlHash &&
      id !== local.broken &&
      (id === local.snapshotId || (await repository.hasSnapshot(ecosystem, id)))
    const validators = intact ? { etag: state!.etag, lastModified: state!.lastModified } : {}
    let abort: (() => void) | undefined
    try {
      const answer = await this.fetcher(feedArchiveUrl(settings.url!, ecosystem), validators)
      if (answer.kind === 'not-modified') {
        const next: AdvisoryFeedState = { ...state!, lastAttempt: at, lastRefresh: at, lastError: null }
        await repository.saveState(next)
        local.state = next
        logger.info('advisory feed unchanged', { ecosystem, records: next.records })
        return { ecosystem, outcome: 'unchanged', records: next.records }
      }
      abort = answer.abort
      this.downloads.add(abort)
      const { etag, lastModified } = answer
      const origin = { origin: 'feed' as const, urlHash: this.urlHash, etag, lastModified }
      return await this.store(ecosystem, state, answer.body, origin, at)
    } catch (error) {
      if (this.stopped) return { ecosystem, outcome: 'failed', error: 'stopped' }
      const message = errorText(error)
      const base = state ?? { ecosystem, records: 0, invalid: 0, withdrawn: 0 }
      const next: AdvisoryFeedState = { ...base, lastAttempt: at, lastError: { at, message } }
      await repository.saveState(next).catch(() => undefined)
      local.state = next
      const loaded = local.index !== null
      logger.warn('advisory feed refresh failed; the data loaded before stays', { ecosystem, error: message, loaded })
      return { ecosystem, outcome: 'failed', error: message }
    } finally {
      if (abort) this.downloads.delete(abort)
    }
  }

  /** Reads an archive into a new index, stores it as the snapshot and swaps it in. */
  private async store(
    ecosystem: Ecosystem,
    previous: AdvisoryFeedState | null,
    source: AsyncIterable<Uint8Array>,
    origin: ArchiveOrigin,
    at: string,
  ): Promise<FeedSyncReport> {
    const { repository } = this.options
    const pace = () => this.pace()
    const stored = await storeArchive({ repository, ecosystem, previous, source, origin, at, pace, load: this.options.loader })
    this.swap(ecosystem, stored.index, stored.state.snapshotId!, stored.state)
    return stored.report
  }

  /** The one step readers see: the new index replaces the old in a single assignment. */
  private swap(ecosystem: Ecosystem, index: AdvisoryIndex, snapshotId: string, state?: AdvisoryFeedState): void {
    const local = this.slot(ecosystem)
    local.index = index
    local.snapshotId = snapshotId
    local.broken = null
    if (state) local.state = state
    this.options.onChange?.()
  }

  /** Stops passing, aborts a download in flight and waits for the pass to end. */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.soonTimer) clearTimeout(this.soonTimer)
    this.cancel?.()
    this.cancel = null
    for (const abort of this.downloads) abort()
    await this.idle().catch(() => undefined)
  }
}

function defaultEvery(run: () => void, ms: number): () => void {
  const timer = setInterval(run, ms)
  timer.unref()
  return () => clearInterval(timer)
}

/** A pacer factory for the service: 2 ms slices between requests. */
export const servicePace = (): Pace => pacer(2)
