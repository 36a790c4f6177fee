import { parseDuration } from '../common/duration'
import type { Ecosystem } from '../firewall/schema'
import { OSV_ECOSYSTEMS } from './ecosystems'
import { DEFAULT_MAX_ADVISORY_ENTRIES } from './refresh-guard'

/** OSV's public bucket: one `all.zip` per ecosystem under `{base}/{ecosystem}/all.zip`. */
const DEFAULT_FEED_URL = 'https://osv-vulnerabilities.storage.googleapis.com'

export interface AdvisoryFeedSettings {
  /** Feed base URL; null when `ADVISORY_FEED_URL=off`. */
  url: string | null
  /** `ADVISORY_REFRESH`: time between downloads (default 1h). */
  refreshMs: number
  refresh: string
  /** `ADVISORY_MAX_ENTRIES`: most entries an archive (or records ADVISORY_DIR) may hold; default 500,000. */
  maxEntries?: number
}

/** An operator setting that stops the start (the message names the variable). */
class AdvisorySettingError extends Error {}

/**
 * Reads `ADVISORY_FEED_URL` and `ADVISORY_REFRESH`; throws `AdvisorySettingError` on a value
 * that is neither a URL, `off`, nor a duration.
 * @example advisoryFeedSettings({ ADVISORY_FEED_URL: 'off' }).url // null
 */
export function advisoryFeedSettings(env: NodeJS.ProcessEnv): AdvisoryFeedSettings {
  const raw = (env.ADVISORY_FEED_URL ?? '').trim() || DEFAULT_FEED_URL
  let url: string | null = null
  if (raw.toLowerCase() !== 'off') {
    let parsed: URL
    try {
      parsed = new URL(raw)
    } catch {
      throw new AdvisorySettingError('ADVISORY_FEED_URL must be an http(s) URL or off')
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new AdvisorySettingError('ADVISORY_FEED_URL must be an http(s) URL or off')
    }
    url = raw.replace(/\/+$/, '')
  }
  const refresh = (env.ADVISORY_REFRESH ?? '').trim() || '1h'
  let refreshMs: number
  try {
    refreshMs = parseDuration(refresh)
  } catch (error) {
    throw new AdvisorySettingError(`ADVISORY_REFRESH: ${(error as Error).message}`)
  }
  if (refreshMs < 100) throw new AdvisorySettingError('ADVISORY_REFRESH must be at least 100ms')
  return { url, refreshMs, refresh, maxEntries: maxEntriesOf(env) }
}

/**
 * `ADVISORY_MAX_ENTRIES` (default 500,000: OSV's largest archive, npm, holds under half of that):
 * an archive with more entries is refused while it is read, so it cannot take the memory it asks for.
 * @example maxEntriesOf({ ADVISORY_MAX_ENTRIES: '1000' }) // 1000
 */
export function maxEntriesOf(env: NodeJS.ProcessEnv): number {
  const text = (env.ADVISORY_MAX_ENTRIES ?? '').trim()
  if (!text) return DEFAULT_MAX_ADVISORY_ENTRIES
  const value = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1) {
    throw new AdvisorySettingError('ADVISORY_MAX_ENTRIES must be a positive whole number')
  }
  return value
}

/**
 * The archive of one ecosystem under the feed base, with OSV's ecosystem names.
 * @example feedArchiveUrl('https://osv-vulnerabilities.storage.googleapis.com', 'pypi') // '.../PyPI/all.zip'
 */
export function feedArchiveUrl(base: string, ecosystem: Ecosystem): string {
  const url = new URL(base)
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${encodeURIComponent(OSV_ECOSYSTEMS[ecosystem])}/all.zip`
  return url.toString()
}
