import { threadLoader, type ArchiveLoader } from '../../server/advisories/archive-loader'

/**
 * The advisory loader thread as the service runs it, from the run's bundle of its sources
 * (test/support/global-bundles.ts), else from the sources through tsx (a slower start).
 */
export function loaderThread(): ArchiveLoader | null {
  const entry = process.env.TEST_ADVISORY_LOADER
  return threadLoader(entry ? { entry } : {})
}
