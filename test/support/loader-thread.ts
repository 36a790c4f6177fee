import { threadLoader, type ArchiveLoader } from '../../server/advisories/archive-loader'

/**
 * The advisory loader thread as the service runs it, from the run's bundle of its sources
 * (test/support/global-bundles.ts), else from the sources through tsx (a slower start).
 *
 * At the process's own CPU priority unless `lowPriority`: the suite runs it beside busy test
 * workers at nice 0, where a thread at nice 10 gets about a tenth of a share. Beside four busy
 * loops the 20,000-record test of feed-worker.test.ts took 23.7 s at nice 10 against 1.8 s, and
 * a CI run under heavier load passed its 60 s. The priority itself has its own test (feed-load).
 */
export function loaderThread(options: { lowPriority?: boolean } = {}): ArchiveLoader | null {
  const entry = process.env.TEST_ADVISORY_LOADER
  return threadLoader({ lowPriority: options.lowPriority ?? false, ...(entry ? { entry } : {}) })
}
