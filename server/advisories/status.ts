import type { AdvisoryFeedError, AdvisoryFeedState } from '../../storage/repositories/advisory-feed'
import type { AdvisoryIndex } from './types'
import type { Ecosystem } from '../firewall/schema'

/** Where an ecosystem's advisory data comes from right now. */
type AdvisorySourceName = 'feed' | 'file' | 'directory' | 'feed+directory' | 'file+directory' | 'none'

/** One ecosystem in `GET /v1/{ns}/advisories/status`. */
export interface AdvisoryEcosystemStatus {
  ecosystem: Ecosystem
  source: AdvisorySourceName
  /** Rules can decide; false means vulnerability and malware rules fail closed (503). */
  loaded: boolean
  /** Advisories (vulnerabilities and malware reports) held for the ecosystem. */
  records: number
  /** Feed records skipped as invalid / withdrawn at the last load. */
  invalid: number
  withdrawn: number
  /** Last time the feed data was confirmed current (a new archive or a 304). */
  lastRefresh: string | null
  /** Last time the feed data changed. */
  lastChange: string | null
  lastError: { at?: string; message: string } | null
  /** Feed data missing, or older than 3 x ADVISORY_REFRESH; or no data configured at all. */
  stale: boolean
}

export interface AdvisoryStatus {
  feed: { enabled: boolean; refresh: string }
  directory: { configured: boolean; loaded: boolean }
  ecosystems: AdvisoryEcosystemStatus[]
}

interface StatusInputs {
  now: number
  feedEnabled: boolean
  refresh: string
  refreshMs: number
  /** `refused`: why the last reload of the directory was refused (its data before stays). */
  dir: { configured: boolean; loaded: boolean; index: AdvisoryIndex | null; refused?: string | null }
  feed: { ecosystem: Ecosystem; index: AdvisoryIndex | null; state: AdvisoryFeedState | null }[]
}

function sourceOf(
  feedIndex: AdvisoryIndex | null,
  origin: AdvisoryFeedState['origin'],
  dir: boolean,
): AdvisorySourceName {
  const feed = feedIndex ? (origin === 'file' ? 'file' : 'feed') : null
  if (feed && dir) return `${feed}+directory`
  return feed ?? (dir ? 'directory' : 'none')
}

function errorOf(
  state: AdvisoryFeedState | null,
  dirUnreadable: boolean,
  dirRefused: string | null | undefined,
): AdvisoryEcosystemStatus['lastError'] {
  const feedError: AdvisoryFeedError | null | undefined = state?.lastError
  if (feedError) return feedError
  if (dirRefused) return { message: `the advisory directory (ADVISORY_DIR) reload was ${dirRefused}` }
  return dirUnreadable ? { message: 'the advisory directory (ADVISORY_DIR) cannot be read' } : null
}

/**
 * The status of each ecosystem's advisory data, computed from what this process holds. Data
 * counts as loaded when the feed (or an import) loaded it, when ADVISORY_DIR is set and read,
 * or when neither feed nor directory is configured (no data, nothing to fail closed on).
 */
export function advisoryStatus(input: StatusInputs): AdvisoryStatus {
  const { dir, feedEnabled, refreshMs, now } = input
  const dirLoaded = dir.configured && dir.loaded
  const ecosystems = input.feed.map(({ ecosystem, index, state }): AdvisoryEcosystemStatus => {
    const dirRecords = dirLoaded && dir.index ? (dir.index.count?.(ecosystem) ?? 0) : 0
    const loaded = index !== null || dirLoaded || (!feedEnabled && !dir.configured)
    const refreshed = Date.parse(state?.lastRefresh ?? '')
    const old = Number.isNaN(refreshed) || now - refreshed > 3 * refreshMs
    return {
      ecosystem,
      source: sourceOf(index, state?.origin, dirLoaded),
      loaded,
      records: (index?.size ?? 0) + dirRecords,
      invalid: index ? (state?.invalid ?? 0) : 0,
      withdrawn: index ? (state?.withdrawn ?? 0) : 0,
      lastRefresh: state?.lastRefresh ?? null,
      lastChange: state?.lastChange ?? null,
      lastError: errorOf(state, dir.configured && !dir.loaded, dir.refused),
      stale: feedEnabled ? index === null || old : !loaded || (!dir.configured && index === null),
    }
  })
  return {
    feed: { enabled: feedEnabled, refresh: input.refresh },
    directory: { configured: dir.configured, loaded: dir.loaded },
    ecosystems,
  }
}
