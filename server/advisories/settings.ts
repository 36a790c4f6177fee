import { parseDuration } from '../common/duration'
import type { Ecosystem } from '../firewall/schema'
import { OSV_ECOSYSTEMS } from '../firewall/advisories/ecosystems'

/** OSV's public bucket: one `all.zip` per ecosystem under `{base}/{ecosystem}/all.zip`. */
const DEFAULT_FEED_URL = 'https://osv-vulnerabilities.storage.googleapis.com'

export interface AdvisoryFeedSettings {
  /** Feed base URL; null when `ADVISORY_FEED_URL=off`. */
  url: string | null
  /** `ADVISORY_REFRESH`: time between downloads (default 1h). */
  refreshMs: number
  refresh: string
}

/** An operator setting that stops the start (the message names the variable). */
class AdvisorySettingError extends Error {}

/**
 * Reads `ADVISORY_FEED_URL` and `ADVISORY_REFRESH`; throws `AdvisorySettingError` on a value
 * that is neither a URL, `off`, nor a duration.
 * @example advisoryFeedSettings({ ADVISORY_FEED_URL: 'off' }).url // null
 */
export function advisoryFeedSettings(env: NodeJS.ProcessEnv = process.env): AdvisoryFeedSettings {
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
  return { url, refreshMs, refresh }
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
