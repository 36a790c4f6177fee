import type { EdgePorts } from './ports'
import type { Principal } from '../auth/principal'
import { logger } from '../app/logger'
import { parseDuration } from '../common/duration'
import { observeRateLimited } from '../observability/metrics'

/** `limit` requests per `windowMs`, per token. */
interface RateLimit {
  limit: number
  windowMs: number
}

/** `auth`: calls without a valid token, counted per client address. */
export type RateLimitScope = 'api' | 'registry' | 'auth'

interface RateLimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the window resets (also the Retry-After when refused). */
  resetSeconds: number
  /** `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-Policy`, and `Retry-After` when refused. */
  headers: Record<string, string>
}

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
export function rateLimitSettings(env: NodeJS.ProcessEnv = process.env): Record<RateLimitScope, RateLimit | null> {
  return {
    api: parseRateLimit(env.API_RATE_LIMIT || '6000/m'),
    registry: parseRateLimit(env.REGISTRY_RATE_LIMIT || '60000/m'),
    auth: parseRateLimit(env.AUTH_FAILURE_RATE_LIMIT || '60/m'),
  }
}

let settings: Record<RateLimitScope, RateLimit | null> | null = null

/**
 * Counts one request of the principal's token in `scope` and says whether it may proceed.
 * Null when the scope is unlimited. Storage failures let the request through (logged):
 * the limiter must not turn a Redis hiccup into refusals.
 * @example const limited = await checkRateLimit(services, 'registry', principal)
 */
export function checkRateLimit(
  services: Pick<EdgePorts, 'clock' | 'rateCounter'>,
  scope: 'api' | 'registry',
  principal: Pick<Principal, 'tokenId'>,
): Promise<RateLimitResult | null> {
  return countHit(services, scope, principal.tokenId)
}

/**
 * Counts one call without a valid token from `address` (the subject of the `auth` scope).
 * @example const limited = await checkAuthFailureLimit(services, '203.0.113.7')
 */
export function checkAuthFailureLimit(
  services: Pick<EdgePorts, 'clock' | 'rateCounter'>,
  address: string | undefined,
): Promise<RateLimitResult | null> {
  return countHit(services, 'auth', address ?? 'unknown')
}

async function countHit(
  services: Pick<EdgePorts, 'clock' | 'rateCounter'>,
  scope: RateLimitScope,
  subject: string,
): Promise<RateLimitResult | null> {
  settings ??= rateLimitSettings()
  const policy = settings[scope]
  if (!policy) return null
  let hit
  try {
    hit = await services.rateCounter.hit(`${scope}:${subject}`, policy.windowMs, services.clock.now())
  } catch (error) {
    logger.warn('rate limit check failed, request let through', { scope, error: String(error) })
    return null
  }
  const resetSeconds = Math.max(1, Math.ceil((hit.resetAt - services.clock.now()) / 1000))
  const allowed = hit.count <= policy.limit
  const remaining = Math.max(0, policy.limit - hit.count)
  const headers: Record<string, string> = {
    'ratelimit-limit': String(policy.limit),
    'ratelimit-remaining': String(remaining),
    'ratelimit-reset': String(resetSeconds),
    'ratelimit-policy': `${policy.limit};w=${Math.round(policy.windowMs / 1000)}`,
  }
  if (!allowed) {
    headers['retry-after'] = String(resetSeconds)
    observeRateLimited(scope)
  }
  return { allowed, limit: policy.limit, remaining, resetSeconds, headers }
}
