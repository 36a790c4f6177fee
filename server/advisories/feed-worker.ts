import { createHash } from 'node:crypto'
import type { AdvisoryFeedRepository, AdvisoryFeedState } from '../../storage/repositories/advisory-feed'
import type { Lease } from '../../storage/repositories/leases'
import { logger } from '../app/logger'
import { isoTime, type Clock } from '../common/clock'
import { pacer, type Pace } from './pace'
import type { AdvisoryIndex } from './types'
import { ECOSYSTEMS, type Ecosystem } from '../firewall/schema'
import type { FeedSyncReport } from './archive-store'
import { inThreadLoader, type ArchiveLoader } from './archive-loader'
import { FeedError } from './feed-client'
import { downloadFeed, errorText, storeLoaded, withLease, type DownloadContext } from './feed-download'
import { FeedHoldings, type AdvisorySwapListener, type FeedEcosystemView } from './feed-holdings'
import { BUSY_RETRY_MS, defaultEvery, IN_USE_MAX_MS, POLL_MAX_MS, refreshDue } from './feed-schedule'
import type { AdvisoryFeedSettings } from './settings'
import { DEFAULT_MAX_ADVISORY_ENTRIES, RefreshRefused } from './refresh-guard'
import { observeAdvisoryRefusal } from '../observability/metrics'

export type { FeedSyncReport } from './archive-store'

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
  /** A pacer per job; default 2 ms slices (the CLI passes none: nothing else waits there). */
  pace?: () => Pace
  /** Where archives are downloaded and read (a worker thread in the service); default this thread, paced. */
  loader?: ArchiveLoader
  /** Called after an index was swapped in, with the index it replaced. */
  onChange?: AdvisorySwapListener
  /** Timer seam; returns a cancel function. */
  every?: (run: () => void, ms: number) => () => void
}

/**
 * Keeps the OSV feed of every ecosystem in use loaded. Every `ADVISORY_REFRESH` one process
 * (holding the ecosystem's lease) makes a conditional request; a new archive is read as a
 * stream into a new index beside the old one, stored as a compressed snapshot and swapped in.
 * The other processes load that snapshot when its id changes. A failed download keeps the old
 * data and is recorded as the ecosystem's `lastError`.
 */
export class AdvisoryFeed {
  private readonly held: FeedHoldings
  private readonly wanted = new Set<Ecosystem>()
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
    this.held = new FeedHoldings(options.onChange)
    const url = options.settings.url
    this.urlHash = url ? createHash('sha256').update(url).digest('base64url').slice(0, 22) : undefined
  }

  /** The ecosystem's data held here, or null when none is loaded yet. */
  index(ecosystem: Ecosystem): AdvisoryIndex | null {
    return this.held.index(ecosystem)
  }

  view(): FeedEcosystemView[] {
    return this.held.view()
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
    return ECOSYSTEMS.filter((e) => this.inUse!.has(e) || this.wanted.has(e) || this.held.index(e))
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
      if (!download || !this.options.settings.url || !wanted.includes(ecosystem) || !this.due(ecosystem, state))
        continue
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
    const held = this.held.slot(ecosystem)
    held.state = state
    const id = state?.snapshotId
    if (!id || id === held.snapshotId || id === held.broken) return
    const bytes = await this.options.repository.snapshot(ecosystem, id)
    // Replaced meanwhile: the next pass reads the new state.
    if (!bytes) return
    try {
      const loader = this.options.loader ?? inThreadLoader
      const { index, memory, reusedBlocks } = await loader.snapshot(bytes, this.pace(), held.memory ?? held.followed)
      this.held.swap(ecosystem, index, memory, id)
      logger.info('advisory snapshot loaded', { ecosystem, records: index.size, reusedBlocks })
    } catch (error) {
      held.broken = id
      const text = errorText(error)
      logger.warn('stored advisory snapshot cannot be read; downloading the feed again', { ecosystem, error: text })
    }
  }

  private due(ecosystem: Ecosystem, state: AdvisoryFeedState | null): boolean {
    const broken = this.held.slot(ecosystem).broken
    const { refreshMs } = this.options.settings
    return refreshDue({ state, urlHash: this.urlHash, broken, refreshMs, now: this.options.clock.now() })
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
    const result = await this.underLease(ecosystem, async () => {
      const state = await this.options.repository.state(ecosystem)
      const at = isoTime(this.options.clock)
      const started = Date.now()
      // The file is read on this thread and its bytes forwarded to the loader: only the download moved there.
      const loader = this.options.loader ?? inThreadLoader
      const maxEntries = this.options.settings.maxEntries ?? DEFAULT_MAX_ADVISORY_ENTRIES
      const loaded = await loader.archive(source, this.pace(), this.held.slot(ecosystem).memory, maxEntries)
      const { repository } = this.options
      try {
        return await storeLoaded(repository, ecosystem, state, { loaded, started }, { origin: 'file' }, at)
      } catch (error) {
        if (error instanceof RefreshRefused) observeAdvisoryRefusal(ecosystem, 'file')
        throw error
      }
    })
    return result ? this.held.adopt(ecosystem, result) : { ecosystem, outcome: 'busy' }
  }

  private underLease<T>(ecosystem: Ecosystem, work: () => Promise<T>): Promise<T | null> {
    return withLease(this.options.lease(ecosystem), this.options.owner, work)
  }

  private async refreshUnderLease(ecosystem: Ecosystem, force: boolean): Promise<FeedSyncReport> {
    const result = await this.underLease(ecosystem, async () => {
      // Read again under the lease: another process may have refreshed a moment ago.
      const state = await this.options.repository.state(ecosystem)
      if (!force && !this.due(ecosystem, state)) {
        await this.follow(ecosystem, state)
        return null
      }
      const { snapshotId, broken, memory, index } = this.held.slot(ecosystem)
      const held = { snapshotId, broken, loaded: index !== null, memory }
      return downloadFeed(this.downloadContext(), ecosystem, state, held, isoTime(this.options.clock))
    })
    return result ? this.held.adopt(ecosystem, result) : { ecosystem, outcome: 'busy' }
  }

  private downloadContext(): DownloadContext {
    return {
      repository: this.options.repository,
      url: this.options.settings.url ?? '',
      urlHash: this.urlHash,
      loader: this.options.loader,
      pace: () => this.pace(),
      downloads: this.downloads,
      stopped: () => this.stopped,
      maxEntries: this.options.settings.maxEntries ?? DEFAULT_MAX_ADVISORY_ENTRIES,
    }
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

/** A pacer factory for the service: 2 ms slices between requests. */
export const servicePace = (): Pace => pacer(2)
