import { send, sendNoContent, type EventHandler, type H3Event } from 'h3'

/**
 * API calls straight to the API handler, ahead of Nitro's app stack (#27). For a `/v1/...` call
 * that stack only costs: three hook calls with nothing registered (`request`, `beforeResponse`,
 * `afterResponse`, each a task and promises), the route-rules and public-asset middleware (no rules,
 * no assets), the dashboard-headers middleware (not a dashboard path) and the route lookup that
 * ends at the `/v1/**` route file, which builds the same handler. Together about a quarter of the
 * CPU of one `GET /v1/{ns}/config/{fw}` under load. The request context, the in-flight count, the
 * access line and the metrics sample wrap this dispatch as they wrap Nitro's handler.
 */

/**
 * Whether Nitro would route `url` to the `/v1/**` route file and see the same path: under `/v1/`,
 * not `/v1/openapi.json` (a route of its own, with or without its trailing slash), and without
 * percent-escapes (h3 decodes those into the path it routes by: such a call takes Nitro's way).
 */
export function isDirectApiPath(url: string | undefined): boolean {
  if (!url?.startsWith('/v1/')) return false
  const query = url.indexOf('?')
  const path = query < 0 ? url : url.slice(0, query)
  return !path.includes('%') && path !== '/v1/openapi.json' && path !== '/v1/openapi.json/'
}

/**
 * Answers `event` with `handler` as h3's app would after routing: the request's original URL and
 * routed path noted as h3 notes them, then the handler's value sent (a string or bytes, or no
 * content for null). A throw goes to the node listener, which answers it with Nitro's error handler.
 */
export async function answerDirect(event: H3Event, handler: EventHandler): Promise<void> {
  const req = event.node.req
  req.originalUrl ||= req.url || '/'
  // Without percent-escapes h3's decoded path is the URL itself (isDirectApiPath).
  event._path = req.url
  const value: unknown = await handler(event)
  if (value === undefined || value === null) return sendNoContent(event)
  await send(event, value as string | Buffer, typeof value === 'string' ? 'text/html' : undefined)
}
