import { EMPTY_ADVISORY_INDEX } from '../firewall/advisories/index-build'
import { loadAdvisoryDir, watchAdvisoryDir } from '../firewall/advisories/loader'
import type { AdvisoryIndex } from '../firewall/advisories/types'
import { logger } from '../app/logger'

/** The advisory and malware data of one directory, reloaded when its files change. */
export interface AdvisorySource {
  current(): AdvisoryIndex
  /** Resolves after the first load. */
  ready: Promise<void>
  close(): void
}

/**
 * Loads `dir` (OSV JSON files) and keeps the index fresh while files change. Load problems
 * are logged as warnings; a missing directory is an empty index.
 * @example const source = createAdvisorySource(process.env.ADVISORY_DIR); await source.ready
 */
export function createAdvisorySource(dir: string | undefined): AdvisorySource {
  let index: AdvisoryIndex = EMPTY_ADVISORY_INDEX
  if (!dir) return { current: () => index, ready: Promise.resolve(), close: () => undefined }
  let stop: () => void = () => undefined
  let closed = false
  const report = (result: { index: AdvisoryIndex; files: number; records: number; warnings: string[] }) => {
    index = result.index
    logger.info('advisories loaded', { dir, files: result.files, records: result.records, warnings: result.warnings.length })
    for (const warning of result.warnings.slice(0, 20)) logger.warn('advisory file problem', { dir, warning })
  }
  const ready = loadAdvisoryDir(dir).then((result) => {
    report(result)
    if (!closed) stop = watchAdvisoryDir(dir, report, { onError: (error) => logger.warn('advisory watcher stopped', { dir, error: error.message }) })
  })
  return {
    current: () => index,
    ready,
    close: () => {
      closed = true
      stop()
    },
  }
}

let shared: AdvisorySource | null = null

/** The process-wide source for `ADVISORY_DIR`, started on first use. */
export function sharedAdvisorySource(): AdvisorySource {
  shared ??= createAdvisorySource(process.env.ADVISORY_DIR || undefined)
  return shared
}
