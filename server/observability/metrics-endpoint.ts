import { createHash, timingSafeEqual } from 'node:crypto'
import { defineEventHandler, type H3Event } from 'h3'
import type { AppConfig } from '../app/config'
import { problemOf } from '../http/problem'
import { sendProblem } from '../http/respond'
import { renderMetrics } from './metrics'

const digest = (text: string) => createHash('sha256').update(text).digest()

/**
 * Whether the Authorization header carries `Bearer <expected>`. Both sides are hashed first,
 * so the comparison takes the same time whatever the length or content of the guess.
 */
function bearerMatches(header: string | undefined, expected: string): boolean {
  const presented = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? ''
  return timingSafeEqual(digest(presented), digest(expected)) && presented.length > 0
}

/** What the metrics endpoint uses: the scrape token (METRICS_TOKEN), or null for none. */
export interface MetricsPorts {
  config: Pick<AppConfig, 'metricsToken'>
}

/**
 * `GET /metrics` over the ports `services` resolves to (the route file hands it the composition root's).
 * @example export default createMetricsHandler(useServices)
 */
export function createMetricsHandler(services: () => Promise<MetricsPorts>) {
  return defineEventHandler(async (event) => handleMetrics(event, (await services()).config.metricsToken))
}

/**
 * Prometheus text; when a token is set the scraper must send it as a bearer token (401 problem otherwise).
 */
async function handleMetrics(event: H3Event, token: string | null): Promise<string> {
  if (token && !bearerMatches(event.node.req.headers.authorization, token)) {
    return sendProblem(
      event,
      problemOf(401, 'unauthenticated', 'the metrics endpoint needs Authorization: Bearer <METRICS_TOKEN>'),
      { 'www-authenticate': 'Bearer realm="metrics"', 'cache-control': 'no-store' },
    )
  }
  const { contentType, body } = await renderMetrics()
  event.node.res.statusCode = 200
  event.node.res.setHeader('content-type', contentType)
  event.node.res.setHeader('cache-control', 'no-store')
  return body
}
