import { EMPTY_ADVISORY_INDEX } from './index-build'
import { loadAdvisoryDir, watchAdvisoryDir, type AdvisoryLoadResult } from './loader'
import type { AdvisoryIndex } from './types'
import { logger } from '../app/logger'
import { factUnavailable } from '../registry/fact-fetch'
import { DEFAULT_MAX_ADVISORY_ENTRIES, refreshRefusal } from './refresh-guard'
import { observeAdvisoryRefusal } from '../observability/metrics'

/** The advisory and malware data of one directory, reloaded when its files change. */
export interface AdvisorySource {
  current(): AdvisoryIndex
  /** Whether data was read (an unreadable directory is not loaded: rules needing it fail closed). */
  loaded(): boolean
  /** Resolves after the first load attempt. */
  ready: Promise<void>
  /** Why the last reload was refused (advisories/refresh-guard.ts), cleared by the next accepted one. */
  refused(): string | null
  close(): void
}

/** How often a directory that could not be read is tried again. */
const RETRY_MS = 10_000

/**
 * Advisory data that could not be read: a rule that
 * looks a version up refuses the request with 503 instead of deciding on no data. Rules that
 * do not need advisories never call `lookup`, so they are unaffected.
 */
function unavailableIndex(): AdvisoryIndex {
  return {
    size: 0,
    all: () => [],
    lookup: () => {
      throw factUnavailable(
        'advisory data (a vulnerability or malware rule needs it)',
        'the advisory directory',
        'not readable',
      )
    },
  }
}

/**
 * Loads `dir` (OSV JSON files) and keeps the index fresh while files change. A directory that
 * cannot be read (missing, no permission) leaves the data unavailable until a retry reads it;
 * once data was loaded, a later unreadable moment keeps it rather than dropping to none.
 * File-level problems are logged as warnings.
 * @example const source = createAdvisorySource(config.advisories.dir); await source.ready
 */
export function createAdvisorySource(
  dir: string | undefined,
  options: {
    retryMs?: number
    maxRecords?: number
    /** Told after a load replaced the data: the index before (null: none was loaded) and after. */
    onChange?: (previous: AdvisoryIndex | null, next: AdvisoryIndex) => void
  } = {},
): AdvisorySource {
  if (!dir) {
    const current = () => EMPTY_ADVISORY_INDEX
    return { current, loaded: () => true, ready: Promise.resolve(), refused: () => null, close: () => undefined }
  }
  const maxRecords = options.maxRecords ?? DEFAULT_MAX_ADVISORY_ENTRIES
  let index: AdvisoryIndex = unavailableIndex()
  let loaded = false
  let records = 0
  let refused: string | null = null
  let stopWatching: (() => void) | null = null
  let retry: NodeJS.Timeout | undefined
  let closed = false

  let warned = false
  const apply = (result: AdvisoryLoadResult) => {
    if (result.unreadable) {
      // Once per outage, not at every retry.
      if (!warned) {
        const msg = loaded
          ? 'advisory directory unreadable; keeping the data loaded before'
          : 'advisory data unavailable: downloads a vulnerability or malware rule decides are refused until it loads'
        logger.warn(msg, { dir, error: result.unreadable })
      }
      warned = true
      return
    }
    warned = false
    // A directory may be empty at first; a reload must not shrink the data or skip over 1 % of it.
    const refusal = result.tooMany ?? (loaded ? refreshRefusal(result, records, false) : null)
    if (refusal) {
      refused = refusal
      observeAdvisoryRefusal('all', 'directory')
      logger.warn('advisory directory reload refused; keeping the data loaded before', { dir, reason: refusal })
      return
    }
    refused = null
    const previous = loaded ? index : null
    index = result.index
    records = result.records
    loaded = true
    logger.info('advisories loaded', {
      dir,
      files: result.files,
      records: result.records,
      warnings: result.warnings.length,
    })
    for (const warning of result.warnings.slice(0, 20)) logger.warn('advisory file problem', { dir, warning })
    options.onChange?.(previous, index)
  }

  const load = async (): Promise<void> => {
    retry = undefined
    const result = await loadAdvisoryDir(dir, maxRecords)
    if (closed) return
    apply(result)
    if (result.unreadable) {
      retry = setTimeout(() => void load(), options.retryMs ?? RETRY_MS)
      retry.unref()
      return
    }
    stopWatching ??= watchAdvisoryDir(dir, apply, {
      maxRecords,
      onError: (error) => {
        logger.warn('advisory watcher stopped; reading the directory again later', { dir, error: error.message })
        stopWatching = null
        if (!closed && !retry) retry = setTimeout(() => void load(), options.retryMs ?? RETRY_MS).unref()
      },
    })
  }

  return {
    current: () => index,
    loaded: () => loaded,
    ready: load(),
    refused: () => refused,
    close: () => {
      closed = true
      if (retry) clearTimeout(retry)
      stopWatching?.()
    },
  }
}
