import type { EdgePorts } from './ports'
import type { Principal } from '../auth/principal'
import { logger } from '../app/logger'
import type { RateLimitScope } from './rate-limit-settings'
import { observeRateLimited } from '../observability/metrics'
import { slidingWindow } from './sliding-window'

interface RateLimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Allowed: seconds until the current window ends. Refused: until a call is allowed again (the Retry-After). */
  resetSeconds: number
  /** `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-Policy`, and `Retry-After` when refused. */
  headers: Record<string, string>
}

/**
 * Counts one request of the principal's token in `scope` and says whether it may proceed, under
 * a sliding window (sliding-window.ts).
 * Null when the scope is unlimited. Storage failures let the request through (logged):
 * the limiter must not turn a Redis hiccup into refusals.
 * @example const limited = await checkRateLimit(services, 'registry', principal)
 */
export function checkRateLimit(
  services: Pick<EdgePorts, 'clock' | 'rateCounter' | 'config'>,
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
  services: Pick<EdgePorts, 'clock' | 'rateCounter' | 'config'>,
  address: string | undefined,
): Promise<RateLimitResult | null> {
  return countHit(services, 'auth', address ?? 'unknown')
}

async function countHit(
  services: Pick<EdgePorts, 'clock' | 'rateCounter' | 'config'>,
  scope: RateLimitScope,
  subject: string,
): Promise<RateLimitResult | null> {
  const policy = services.config.rateLimits[scope]
  if (!policy) return null
  const now = services.clock.now()
  let hits
  try {
    hits = await services.rateCounter.hit(`${scope}:${subject}`, policy.limit, policy.windowMs, now)
  } catch (error) {
    logger.warn('rate limit check failed, request let through', { scope, error: String(error) })
    return null
  }
  const { allowed, remaining, resetAt } = slidingWindow(hits, policy, now)
  const resetSeconds = Math.max(1, Math.ceil((resetAt - now) / 1000))
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
