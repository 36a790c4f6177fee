import { parseDuration } from '../common/duration'

/** `limit` requests per `windowMs`, per token. */
export interface RateLimit {
  limit: number
  windowMs: number
}

/** `auth`: calls without a valid token, counted per client address. */
export type RateLimitScope = 'api' | 'registry' | 'auth'

/** Each scope's limit; null where it is off. Parsed once at start (server/app/config.ts). */
export type RateLimitSettings = Record<RateLimitScope, RateLimit | null>

const UNITS: Record<string, string> = { s: '1s', m: '1m', h: '1h', d: '1d' }

/**
 * Parses `600/m`, `100/10s` or `5000/1h`; `off` or `0` disables the limit (null).
 * @example parseRateLimit('600/m') // { limit: 600, windowMs: 60000 }
 */
function parseRateLimit(text: string): RateLimit | null {
  const trimmed = text.trim()
  if (trimmed === 'off' || trimmed === '0') return null
  const match = /^(\d+)\/(\w+)$/.exec(trimmed)
  if (!match || Number(match[1]) < 1)
    throw new Error(`invalid rate limit "${text}" (expected e.g. 600/m, 100/10s or off)`)
  return { limit: Number(match[1]), windowMs: parseDuration(UNITS[match[2]] ?? match[2]) }
}

/**
 * `API_RATE_LIMIT` (default 6000/m) and `REGISTRY_RATE_LIMIT` (default 60000/m) per token: generous, so
 * CI jobs and scripts on one token are not throttled by surprise. `AUTH_FAILURE_RATE_LIMIT` (default 60/m)
 * per client address for calls without a valid token: low, since no honest client fails that often.
 */
export function rateLimitSettings(env: NodeJS.ProcessEnv): RateLimitSettings {
  return {
    api: parseRateLimit(env.API_RATE_LIMIT || '6000/m'),
    registry: parseRateLimit(env.REGISTRY_RATE_LIMIT || '60000/m'),
    auth: parseRateLimit(env.AUTH_FAILURE_RATE_LIMIT || '60/m'),
  }
}
