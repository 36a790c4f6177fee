import type { H3Event } from 'h3'
import { logger } from '../app/logger'
import { endRequestContext, type RequestContext } from '../app/request-context'
import { observeHttpRequest } from './metrics'

/** Paths that are their own template (no ids in them). */
const STATIC_ROUTES = new Set([
  '/healthz',
  '/readyz',
  '/metrics',
  '/v1/openapi.json',
  '/schemas/webhook-events-v1.json',
])

/**
 * The metrics label of a request: the template a handler set, else a coarse template from the
 * path. Never the raw path: ids, package names and query strings stay out of labels and logs.
 * @example routeTemplate('/registry/acme/fw/left-pad', {}) // '/registry/{ns}/{fw}/*'
 */
function routeTemplate(path: string, context: Pick<RequestContext, 'route'>): string {
  if (context.route) return context.route
  const bare = path.split('?')[0]
  if (STATIC_ROUTES.has(bare)) return bare
  if (bare.startsWith('/registry/')) return '/registry/{ns}/{fw}/*'
  if (bare.startsWith('/v1/')) return '/v1/*'
  if (bare === '/dashboard' || bare.startsWith('/dashboard/')) return '/dashboard/*'
  return '/*'
}

/**
 * Observes one request when its response closes (finished, failed or aborted), so streamed
 * tarballs count their full duration: one metrics sample and one access line.
 */
export function trackRequest(event: H3Event, context: RequestContext): void {
  const started = process.hrtime.bigint()
  const { req, res } = event.node
  res.once('close', () => {
    endRequestContext(context)
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    // 499: the client went away before the answer was complete (nginx's convention).
    const status = res.writableFinished ? res.statusCode : 499
    const route = routeTemplate(req.url ?? '/', context)
    const method = req.method ?? 'GET'
    observeHttpRequest(route, method, status, seconds)
    // The id the client saw (a handler may answer with its own), passed explicitly: 'close'
    // listeners run outside the request's async context.
    const requestId = String(res.getHeader('x-request-id') ?? context.requestId)
    logger.info('request', { requestId, method, route, status, durationMs: Math.round(seconds * 1e4) / 10 })
  })
}
