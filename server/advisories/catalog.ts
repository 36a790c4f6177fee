import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Services } from '../app/services'
import { logger } from '../app/logger'
import { onMetricsCollect, setAdvisoryGauges } from '../observability/metrics'
import { ecosystemsInUse } from './ecosystems-in-use'
import { AdvisoryFeed, servicePace } from './feed-worker'
import { threadLoader, type ArchiveLoader } from './archive-loader'
import type { AdvisoryFeedSettings } from './settings'
import { advisoryStatus, type AdvisoryStatus } from './status'
import { EMPTY_ADVISORY_INDEX } from './index-build'
import type { Advisory, AdvisoryIndex, AdvisoryMatches } from './types'
import { ECOSYSTEMS, type Ecosystem } from '../firewall/schema'
import { createAdvisorySource, type AdvisorySource } from './directory-source'
import type { AdvisoryPort } from './lookup'
import { RegistryError, RETRY_AFTER_SECONDS } from '../registry/responses'

/** What the feed needs of the services: its repository and leases, the clock, and which ecosystems are in use. */
export type AdvisoryFeedServices = Pick<Services, 'advisoryFeed' | 'leases' | 'clock' | 'namespaces' | 'firewalls'>

/** Every source of advisory data of the process behind one index, and their status: the `AdvisoryPort`. */
export interface AdvisoryCatalog extends Omit<AdvisorySource, 'close' | 'current'>, AdvisoryPort {
  current(): AdvisoryIndex
  status(): AdvisoryStatus
  /** Connects the feed to storage (composition root), loads stored snapshots; downloads nothing yet. */
  attach(services: AdvisoryFeedServices, options?: { feed?: AdvisoryFeed }): Promise<void>
  /** Starts downloading (once the process owns its port). */
  startFeed(): void
  feed(): AdvisoryFeed | null
  /** Stops the directory watch and the feed; resolves once the feed's work has stopped. */
  close(): Promise<void>
  /**
   * Tells `listener` of every change of the data from now on: which source, the index it replaced
   * (null when that source had none loaded) and the new one. Returns the unsubscribe function.
   */
  onChange(listener: AdvisoryChangeListener): () => void
}

/** One change of advisory data: `source` is `directory` or the feed's ecosystem. */
export type AdvisoryChangeListener = (change: {
  source: 'directory' | Ecosystem
  previous: AdvisoryIndex | null
  next: AdvisoryIndex
}) => void

/**
 * Advisory data a rule needs and nobody loaded: the
 * request fails closed with 503 and Retry-After, naming the ecosystem and why.
 */
function notLoaded(ecosystem: Ecosystem, reasons: string[]): RegistryError {
  return new RegistryError(
    503,
    `advisory data for ${ecosystem} is not loaded (${reasons.join('; ')}); ` +
      'a vulnerability or malware rule needs it, retry later',
    { 'retry-after': String(RETRY_AFTER_SECONDS) },
  )
}

function merged(first: AdvisoryMatches, second: AdvisoryMatches | null): AdvisoryMatches {
  if (!second) return first
  const seen = new Set([...first.vulnerabilities, ...first.malware].map((a) => a.id))
  const fresh = (a: Advisory) => !seen.has(a.id)
  return {
    vulnerabilities: [...first.vulnerabilities, ...second.vulnerabilities.filter(fresh)],
    malware: [...first.malware, ...second.malware.filter(fresh)],
  }
}

interface AdvisoryCatalogOptions {
  /** `ADVISORY_DIR`; unset: no directory. */
  dir?: string
  settings: AdvisoryFeedSettings
  now?: () => number
}

/**
 * Combines `ADVISORY_DIR` and the OSV feed: a lookup sees the union (directory records first).
 * An ecosystem counts as loaded when the feed (or an import) loaded it or the directory was read;
 * a lookup for one that is not throws `notLoaded`. With the feed off and no directory there is no
 * data to wait for: lookups find nothing, as before the feed existed.
 * `current()` returns one object until the data changes, so caches keyed on it stay valid.
 */
export function createAdvisoryCatalog(options: AdvisoryCatalogOptions): AdvisoryCatalog {
  const { settings } = options
  const now = options.now ?? Date.now
  const dirConfigured = Boolean(options.dir)
  const listeners = new Set<AdvisoryChangeListener>()
  const tell: AdvisoryChangeListener = (change) => {
    for (const listener of listeners) listener(change)
  }
  const dir = createAdvisorySource(options.dir, {
    maxRecords: settings.maxEntries,
    onChange: (previous, next) => tell({ source: 'directory', previous, next }),
  })
  const feedEnabled = settings.url !== null
  let feed: AdvisoryFeed | null = null
  type Cached = { dirIndex: AdvisoryIndex; dirLoaded: boolean; feeds: (AdvisoryIndex | null)[]; index: AdvisoryIndex }
  let cached: Cached | null = null

  const feedError = (ecosystem: Ecosystem) =>
    feed?.view().find((v) => v.ecosystem === ecosystem)?.state?.lastError?.message

  const build = (dirIndex: AdvisoryIndex, dirLoaded: boolean, feedList: (AdvisoryIndex | null)[]): AdvisoryIndex => {
    const feedIndexes = new Map(ECOSYSTEMS.map((e, i) => [e, feedList[i]]))
    const feeds = [...feedIndexes.values()].filter((index): index is AdvisoryIndex => index !== null)
    return {
      size: (dirLoaded ? dirIndex.size : 0) + feeds.reduce((sum, index) => sum + index.size, 0),
      *all() {
        if (dirLoaded) yield* dirIndex.all()
        for (const index of feeds) yield* index.all()
      },
      count: (ecosystem) =>
        (dirLoaded ? (dirIndex.count?.(ecosystem) ?? 0) : 0) + (feedIndexes.get(ecosystem)?.size ?? 0),
      lookup(ecosystem, name, version) {
        const feedIndex = feedIndexes.get(ecosystem) ?? null
        if (!dirLoaded && !feedIndex) {
          if (!feedEnabled && !dirConfigured) return EMPTY_ADVISORY_INDEX.lookup(ecosystem, name, version)
          feed?.want(ecosystem)
          const reasons: string[] = []
          if (feedEnabled) reasons.push(`feed: ${feedError(ecosystem) ?? 'first download not finished'}`)
          if (dirConfigured) reasons.push('advisory directory: not readable')
          throw notLoaded(ecosystem, reasons)
        }
        const fromDir = dirLoaded ? dirIndex.lookup(ecosystem, name, version) : { vulnerabilities: [], malware: [] }
        return merged(fromDir, feedIndex?.lookup(ecosystem, name, version) ?? null)
      },
    }
  }

  const current = (): AdvisoryIndex => {
    const dirIndex = dir.current()
    const dirLoaded = dirConfigured && dir.loaded()
    const feeds = ECOSYSTEMS.map((e) => feed?.index(e) ?? null)
    const same = (c: Cached) =>
      c.dirIndex === dirIndex && c.dirLoaded === dirLoaded && c.feeds.every((f, i) => f === feeds[i])
    if (cached && same(cached)) return cached.index
    cached = { dirIndex, dirLoaded, feeds, index: build(dirIndex, dirLoaded, feeds) }
    return cached.index
  }

  return {
    current,
    loaded: () => true,
    ready: dir.ready,
    refused: () => dir.refused(),
    status: () =>
      advisoryStatus({
        now: now(),
        feedEnabled,
        refresh: settings.refresh,
        refreshMs: settings.refreshMs,
        dir: {
          configured: dirConfigured,
          loaded: dirConfigured && dir.loaded(),
          index: dirConfigured ? dir.current() : null,
          refused: dir.refused(),
        },
        feed: feed?.view() ?? ECOSYSTEMS.map((ecosystem) => ({ ecosystem, index: null, state: null })),
      }),
    async attach(services, attachOptions = {}) {
      if (feed) return
      feed =
        attachOptions.feed ??
        new AdvisoryFeed({
          repository: services.advisoryFeed,
          lease: (ecosystem) => services.leases.advisoryFeed(ecosystem),
          settings,
          clock: services.clock,
          owner: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
          ecosystemsInUse: () => ecosystemsInUse(services.namespaces, services.firewalls),
          pace: servicePace,
          loader: loaderThread(),
          onChange: (ecosystem, previous, next) => tell({ source: ecosystem, previous, next }),
        })
      // Stored snapshots first, so a restart serves the data it had; a slow store does not hold the start.
      const patience = new Promise((resolve) => setTimeout(resolve, 30_000).unref())
      await Promise.race([feed.loadStored(), patience]).catch((error) =>
        logger.warn('stored advisory snapshots could not be loaded', { error: String(error) }),
      )
    },
    startFeed: () => feed?.start(),
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    feed: () => feed,
    async close() {
      dir.close()
      await feed?.stop()
    },
  }
}

/** Feeds load on a worker thread when the build has one; otherwise here, in paced slices. */
function loaderThread(): ArchiveLoader | undefined {
  const loader = threadLoader()
  if (!loader) logger.warn('no advisory loader thread in this build: feeds load on the request thread, in slices')
  return loader ?? undefined
}

/**
 * The process's catalog for `ADVISORY_DIR` and the OSV feed (`config.advisories`); the composition
 * root (server/plugins/00.services.ts) builds it once and hands it over as `Services.advisories`.
 */
export function createAdvisoryCatalogOf(settings: { dir: string | null; feed: AdvisoryFeedSettings }): AdvisoryCatalog {
  const catalog = createAdvisoryCatalog({ dir: settings.dir ?? undefined, settings: settings.feed })
  onMetricsCollect(() => setAdvisoryGauges(catalog.status().ecosystems))
  return catalog
}
