import type { H3Event } from 'h3'
import type { EdgePorts } from './ports'
import { currentRequestId, requestRefusedUnauthenticated, setRequestRoute } from '../app/request-context'
import { authenticate } from '../auth/authenticate'
import type { Principal, RequestMeta } from '../auth/principal'
import { DomainError } from '../common/errors'
import { newId } from '../common/ids'
import { clientAddress } from './request-origin'
import type { TrustProxy } from './trust-proxy'
import { watchClientAbort } from './client-abort'
import { HttpProblem } from './problem'
import { checkAuthFailureLimit, checkRateLimit } from './rate-limit'

/**
 * The one edge every request passes, whichever surface serves it (API router, registry proxy,
 * dashboard pages and actions): its request id, its metadata for events and audit entries
 * (client address under the one `TRUST_PROXY` policy), authentication with the per-address
 * limit on failures, and the per-token rate limit. The surfaces differ only in how they answer
 * (problem JSON, `{ error }` JSON, an HTML page), which they map from the errors thrown here.
 */

interface EdgeRequest {
  requestId: string
  meta: RequestMeta
}

/**
 * Opens a request at the edge: the observability plugin's request id (so the access line and
 * this request's log lines agree; a new one outside Nitro), `X-Request-Id` on the answer, the
 * route template for metrics when given, and the request's metadata (the client address under
 * `trustProxy`, the operator's TRUST_PROXY from `config.trustProxy`).
 * @example const { requestId, meta } = openRequest(event, services.config.trustProxy, '/v1/{ns}/firewalls')
 */
export function openRequest(event: H3Event, trustProxy: TrustProxy, route?: string): EdgeRequest {
  const requestId = currentRequestId() ?? newId('req')
  if (route) setRequestRoute(route)
  if (!event.node.res.headersSent) event.node.res.setHeader('x-request-id', requestId)
  const req = event.node.req
  watchClientAbort(req)
  const meta: RequestMeta = {
    requestId,
    remoteAddress: clientAddress(event, trustProxy),
    userAgent: req.headers['user-agent']?.slice(0, 300),
    method: req.method,
    // The path as the client sent it (a mounted handler's own url lacks the mount prefix).
    path: (req.originalUrl ?? req.url ?? '').split('?')[0],
  }
  return { requestId, meta }
}

/** A refusal past a rate limit: 429 with the RateLimit headers and Retry-After. */
export const isRateLimited = (error: unknown): error is HttpProblem =>
  error instanceof HttpProblem && error.status === 429

/**
 * Authenticates `presented` for namespace `ns`. A caller that keeps presenting bad tokens is
 * refused 429 instead of 401 once past `AUTH_FAILURE_RATE_LIMIT` (per client address); a caller
 * with a valid token is never counted. A refused caller no longer makes webhook delivery give way.
 * @throws DomainError `unauthenticated`, or an HttpProblem 429 (see `isRateLimited`)
 */
export async function authenticateCaller(
  services: EdgePorts,
  presented: string | null,
  ns: string,
  meta: RequestMeta,
): Promise<Principal> {
  try {
    return await authenticate(services, presented, ns)
  } catch (error) {
    if (!(error instanceof DomainError) || error.kind !== 'unauthenticated') throw error
    requestRefusedUnauthenticated()
    const limit = await checkAuthFailureLimit(services, meta.remoteAddress)
    if (limit && !limit.allowed) {
      throw new HttpProblem(
        429,
        'rate_limited',
        `too many calls without a valid token from this address; retry in ${limit.resetSeconds}s`,
        undefined,
        limit.headers,
      )
    }
    throw error
  }
}

const SCOPE_NAMES = { api: 'API', registry: 'registry' } as const

/**
 * Counts the request against the token's limit in `scope` (the dashboard spends the API's: it
 * calls the same domain with the same token): RateLimit headers on the answer, or an HttpProblem
 * 429 once the limit is exceeded.
 */
export async function enforceTokenRateLimit(
  event: H3Event,
  services: EdgePorts,
  scope: 'api' | 'registry',
  principal: Principal,
): Promise<void> {
  const result = await checkRateLimit(services, scope, principal)
  if (!result) return
  if (!result.allowed) {
    throw new HttpProblem(
      429,
      'rate_limited',
      `${SCOPE_NAMES[scope]} rate limit of ${result.limit} requests exceeded for this token; retry in ${result.resetSeconds}s`,
      undefined,
      result.headers,
    )
  }
  if (event.node.res.headersSent) return
  for (const [name, value] of Object.entries(result.headers)) event.node.res.setHeader(name, value)
}
