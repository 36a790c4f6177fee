import { defineEventHandler, type H3Event } from 'h3'
import type { RegistryPorts } from './ports'
import { logger } from '../app/logger'
import { credentialFromHeader } from '../auth/authenticate'
import { requireFirewallPermission } from '../auth/permissions'
import type { RequestMeta } from '../auth/principal'
import { DomainError, firewallNotFound } from '../common/errors'
import { HttpProblem, STATUS_BY_KIND, STORAGE_RETRY_AFTER_SECONDS } from '../http/problem'
import { isStorageFailure } from '../../storage/storage-failure'
import { authenticateCaller, enforceTokenRateLimit, isRateLimited, openRequest } from '../http/edge'
import { auditRefusal } from '../http/refusal-audit'
import { requestOrigin } from '../http/request-origin'
import { isClientAbort } from '../http/client-abort'
import { CLIENT_ID_PATTERN } from '../common/ids'
import type { Principal } from '../auth/principal'
import { RegistryCache, type RegistryCacheOptions } from './cache'
import { withReasonPhrase } from './artifact-decision'
import { ecosystemProtocol } from './ecosystems'
import { IntegrityMismatch } from './upstream/integrity'
import type { RegistryExchange } from './exchange'
import type { ProxyRequest } from './proxy-request'
import { RegistryError, RETRY_AFTER_SECONDS, sendJson, type ResponseHeaders } from './responses'
import { UpstreamUnavailable } from './upstream/client'
import { recordUpstreamFailures, type FailureSite } from './upstream-failures'

export interface RegistryHandlerOptions extends RegistryCacheOptions {
  upstreamTimeoutMs?: number
  /** Largest publish body, bytes. Default 100 MiB (npm's own limit is about that). */
  maxBodyBytes?: number
}

const PREFIX = /^\/registry\/([^/?#]+)\/([^/?#]+)(\/[^?#]*)?(?:\?(.*))?$/

/** A percent-decoded path segment; undecodable input becomes a string no id pattern accepts. */
function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    return ''
  }
}

/**
 * The caller of a registry request (NuGet push and unlist carry the token as X-NuGet-ApiKey, the README (Using a firewall)).
 * Past `AUTH_FAILURE_RATE_LIMIT` failures from one address the answer is 429, audited in aggregate.
 */
async function authenticateOrRefuse(
  event: H3Event,
  services: RegistryPorts,
  ns: string,
  meta: RequestMeta,
): Promise<Principal> {
  const apiKey = event.node.req.headers['x-nuget-apikey']
  const presented =
    credentialFromHeader(event.node.req.headers.authorization) ?? (typeof apiKey === 'string' && apiKey ? apiKey : null)
  try {
    return await authenticateCaller(services, presented, ns, meta)
  } catch (error) {
    if (isRateLimited(error))
      await auditRefusal(services, { ns, scope: 'auth', principal: null, meta, statusCode: 429 }).catch(() => undefined)
    throw error
  }
}

/**
 * Origin for rewritten URLs: `PUBLIC_BASE_URL`, else the request's (X-Forwarded-* only from a
 * proxy `TRUST_PROXY` names). An invalid host is 400.
 */
function originOf(event: H3Event, services: RegistryPorts): string {
  if (services.config.publicBaseUrl) return services.config.publicBaseUrl
  return requestOrigin(event, services.config.trustProxy)
}

/**
 * The 401 challenges, one per header and Basic first. Maven (wagon / HttpClient 4), Gradle, pip
 * and NuGet send their credentials only after a Basic challenge, and HttpClient reads one scheme
 * per header: a single `Bearer ..., Basic ...` header was taken as Bearer alone and never answered.
 */
export const AUTH_CHALLENGES = ['Basic realm="package-firewall"', 'Bearer realm="package-firewall"'] as const

function sendError(exchange: RegistryExchange, error: unknown, requestId: string, firewall: string | undefined): void {
  if (error instanceof RegistryError)
    return sendJson(exchange, error.status, error.body(), error.headers, error.contentType)
  if (error instanceof HttpProblem) return sendJson(exchange, error.status, { error: error.message }, error.headers)
  if (error instanceof DomainError) {
    const headers: ResponseHeaders = error.kind === 'unauthenticated' ? { 'www-authenticate': AUTH_CHALLENGES } : {}
    return sendJson(exchange, STATUS_BY_KIND[error.kind], { error: error.message }, headers)
  }
  if (error instanceof UpstreamUnavailable) {
    // Logged, never an event; 503 + Retry-After so clients retry.
    logger.warn('upstream unavailable', { requestId, firewall, upstream: error.upstream, reason: error.reason })
    return sendJson(
      exchange,
      503,
      { error: `upstream ${error.upstream} is unavailable, retry later (request id ${requestId})` },
      { 'retry-after': String(RETRY_AFTER_SECONDS) },
    )
  }
  if (isStorageFailure(error)) {
    logger.error('registry request failed: storage unavailable', {
      requestId,
      firewall,
      reason: (error as Error).message,
    })
    return sendJson(
      exchange,
      503,
      { error: `storage is unavailable, retry later (request id ${requestId})` },
      { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
    )
  }
  if (error instanceof IntegrityMismatch) {
    logger.error('tarball integrity mismatch', { requestId, firewall, reason: (error as Error).message })
    return sendJson(exchange, 502, { error: `${error.message} (request id ${requestId})` })
  }
  logger.error('registry request failed', { requestId, firewall, error: (error as Error)?.stack ?? String(error) })
  return sendJson(exchange, 500, { error: `internal error (request id ${requestId})` })
}

/**
 * The registry proxy at `/registry/{ns}/{fw}/...`: request id, bearer authentication (401),
 * firewall lookup (404, also when the caller cannot see it), `fw:access` (403), then the
 * ecosystem's protocol handler. Every failure answers JSON with an `error` text.
 * @example app.use(createRegistryHandler(() => Promise.resolve(services)))
 */
export function createRegistryHandler(getServices: () => Promise<RegistryPorts>, options: RegistryHandlerOptions = {}) {
  const caches = new WeakMap<RegistryPorts, RegistryCache>()
  return defineEventHandler(async (event) => {
    const services = await getServices()
    const { requestId, meta } = openRequest(event, services.config.trustProxy, '/registry/{ns}/{fw}/*')
    // What protocol modules get of the request: method, headers, body stream, response.
    const exchange: RegistryExchange = {
      method: event.method,
      headers: event.node.req.headers,
      body: event.node.req,
      response: event.node.res,
    }
    const match = PREFIX.exec(event.node.req.originalUrl ?? event.node.req.url ?? '')
    let firewallId: string | undefined
    // Set once the caller may use the firewall: failed upstream calls are logged against it.
    let site: (FailureSite & { services: RegistryPorts }) | undefined
    const failures: UpstreamUnavailable[] = []
    const logFailures = async () => {
      if (site && failures.length)
        await recordUpstreamFailures(site.services, site, failures).catch((error) =>
          logger.error('upstream failure log write failed', { requestId, error: String(error) }),
        )
    }
    try {
      if (!match) throw new RegistryError(404, 'not found: registry URLs are /registry/{namespace}/{firewall}/')
      const [, rawNs, rawFw, path = '/', search = ''] = match
      const ns = decodeSegment(rawNs)
      firewallId = decodeSegment(rawFw)
      if (!CLIENT_ID_PATTERN.test(ns) || !CLIENT_ID_PATTERN.test(firewallId)) {
        throw new RegistryError(404, 'not found: registry URLs are /registry/{namespace}/{firewall}/ with plain ids')
      }
      // The first request waits for the first ADVISORY_DIR load rather than deciding against no data.
      await services.advisories.ready
      const principal = await authenticateOrRefuse(event, services, ns, meta)
      await enforceTokenRateLimit(event, services, 'registry', principal).catch(async (error: unknown) => {
        if (isRateLimited(error))
          await auditRefusal(services, { ns, scope: 'registry', principal, meta, statusCode: 429 }).catch(
            () => undefined,
          )
        throw error
      })
      const firewall = await services.firewalls.get(ns, firewallId)
      if (!firewall) throw firewallNotFound(firewallId)
      requireFirewallPermission(principal, firewall, 'fw:access')
      site = { services, ns, firewall, principal, meta }
      let cache = caches.get(services)
      if (!cache) caches.set(services, (cache = new RegistryCache(services.registryCache, services.clock, options)))
      const request: ProxyRequest = {
        ...exchange,
        services,
        ns,
        firewall,
        principal,
        meta,
        path,
        query: new URLSearchParams(search),
        baseUrl: `${originOf(event, services)}/registry/${rawNs}/${rawFw}/`,
        dashboardUrl: services.config.dashboardUrl ?? originOf(event, services),
        scope: {
          ns,
          firewall,
          cache,
          transport: services.upstreamTransport,
          timeoutMs: options.upstreamTimeoutMs,
          failures,
        },
        advisories: services.advisories.current(),
        maxBodyBytes: options.maxBodyBytes ?? 100 * 1024 * 1024,
      }
      const protocol = ecosystemProtocol(firewall.ecosystem)
      if (protocol.reasonPhrase(exchange.method, exchange.headers))
        await withReasonPhrase(request, () => protocol.handle(request))
      else await protocol.handle(request)
      await logFailures()
    } catch (error) {
      // Written before the 503 goes out, so the log holds it once the client has its answer.
      if (error instanceof UpstreamUnavailable) failures.push(error)
      await logFailures()
      // A client gone mid-body: nobody to answer, nothing to log beyond the access line's 499.
      if (!event.node.res.headersSent && !isClientAbort(error)) sendError(exchange, error, requestId, firewallId)
      else event.node.res.destroy()
    }
  })
}
