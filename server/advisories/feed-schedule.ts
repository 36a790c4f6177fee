import type { AdvisoryFeedState } from '../../storage/repositories/advisory-feed'

/** A failed download is tried again after this (or ADVISORY_REFRESH when shorter). */
const ERROR_RETRY_MS = 60_000
/** Processes look for a snapshot another one stored at least this often. */
export const POLL_MAX_MS = 15_000
/** While another process downloads data this one lacks, its snapshot is looked for this often. */
export const BUSY_RETRY_MS = 1_000
/** How often the ecosystems of all firewalls are listed again (a lookup that misses asks at once). */
export const IN_USE_MAX_MS = 60_000
/** The download lease, renewed while the download runs; a dead holder is replaced after it. */
export const LEASE_TTL_MS = 60_000

/** What the schedule needs to know of one ecosystem besides the shared state. */
interface RefreshDueInput {
  state: AdvisoryFeedState | null
  /** Hash of this process's feed URL: data from another URL is downloaded again. */
  urlHash: string | undefined
  /** A stored snapshot that failed to load here. */
  broken: string | null
  refreshMs: number
  now: number
}

/**
 * Whether the ecosystem's feed is due for a (conditional) download: never downloaded, another URL,
 * a snapshot that cannot be read here, or the last attempt older than ADVISORY_REFRESH (or than
 * min(ADVISORY_REFRESH, 1 min) after a failure).
 * @example refreshDue({ state, urlHash, broken: null, refreshMs: 3_600_000, now: clock.now() })
 */
export function refreshDue({ state, urlHash, broken, refreshMs, now }: RefreshDueInput): boolean {
  if (!state || state.urlHash !== urlHash) return true
  if (state.snapshotId && state.snapshotId === broken) return true
  const last = Date.parse(state.lastAttempt ?? '')
  if (Number.isNaN(last)) return true
  const wait = state.lastError ? Math.min(refreshMs, ERROR_RETRY_MS) : refreshMs
  return now - last >= wait
}

/** The default timer: runs `run` every `ms` without keeping the process alive; returns a cancel. */
export function defaultEvery(run: () => void, ms: number): () => void {
  const timer = setInterval(run, ms)
  timer.unref()
  return () => clearInterval(timer)
}
