import { getRouterParams, sendRedirect, setResponseHeader, setResponseStatus, type H3Event } from 'h3'
import type { DashboardCall, DashboardPorts, DashboardServices } from './ports'
import { authenticate } from '../auth/authenticate'
import type { Principal, RequestMeta } from '../auth/principal'
import { DomainError } from '../common/errors'
import { recordAudit } from '../http/audit'
import { toProblem, type Problem } from '../http/problem'
import type { TrustProxy } from '../http/trust-proxy'
import { enforceTokenRateLimit, openRequest } from '../http/edge'
import { logger } from '../app/logger'
import { csrfToken, CSRF_FIELD, verifyCsrf } from './csrf'
import { href, html, Html } from './html'
import { layout, type Viewer } from './layout'
import { backLink, readForm, type Form } from './request'
import { dashboardSession, setFlash, takeFlash, type DashboardSession, type Flash } from './session'

/** Everything a page or action handler gets: the domain call context plus page helpers. */
export interface DashboardRequest {
  event: H3Event
  services: DashboardPorts
  session: DashboardSession
  ctx: DashboardCall
  viewer: Viewer
  params: Record<string, string>
  query: URLSearchParams
  flash?: Flash
}

/**
 * What an action answers: a redirect (post-redirect-get) or a page rendered in place; a page
 * with a `problem` is a refused form shown again with its errors (audited as a failure).
 */
export type ActionResult = { redirect: string; flash?: string } | { page: Html; status?: number; problem?: Problem }

interface AuditSpec {
  action: string
  resourceType: string
  resourceId?: (params: Record<string, string>) => string | undefined
}

const sendHtml = (event: H3Event, page: Html, status = 200) => {
  setResponseStatus(event, status)
  setResponseHeader(event, 'content-type', 'text/html; charset=utf-8')
  setResponseHeader(event, 'cache-control', 'no-store')
  return page.value
}

/**
 * An error as a page with the status the API would answer (403 names the missing permission).
 * `trustProxy` (config.trustProxy) decides which host "Go back" may lead to.
 */
export function errorPage(event: H3Event, error: unknown, trustProxy: TrustProxy, viewer?: Viewer) {
  const { problem, headers, unexpected } = toProblem(error)
  // Retry-After and the RateLimit headers of a 429, as the API sends them.
  if (!event.node.res.headersSent)
    for (const [name, value] of Object.entries(headers)) setResponseHeader(event, name, value)
  if (unexpected)
    logger.error('dashboard request failed', { path: event.path, error: (error as Error)?.stack ?? String(error) })
  const home = viewer ? href('namespaces', viewer.ns) : '/'
  const body = html`<section class="card error-card">
    <h1>${problem.title}</h1>
    <p>${problem.detail}</p>
    ${
      problem.errors?.length
        ? html`<ul>
            ${problem.errors.map((e) => html`<li><code>${e.path}</code>: ${e.message}</li>`)}
          </ul>`
        : ''
    }
    <p>
      <a href="${backLink(event, home, trustProxy)}">Go back</a>${viewer ? html` · <a href="${home}">Home</a>` : ''}
    </p>
  </section>`
  return sendHtml(event, layout({ title: problem.title, viewer, body }), problem.status)
}

/**
 * A dashboard entry point: the route table (routes.ts) hands it the ports' getter, which it
 * awaits after opening the request.
 */
export type DashboardHandler = (event: H3Event, services: DashboardServices) => unknown

interface Loaded {
  services: DashboardPorts
  session: DashboardSession
  params: Record<string, string>
  meta: RequestMeta
}

async function load(event: H3Event, getServices: DashboardServices): Promise<Loaded> {
  // The same edge as the API and the registry: request id, client address, metadata.
  const services = await getServices()
  const { meta } = openRequest(event, services.config.trustProxy)
  const session = await dashboardSession(event, services)
  return { services, session, params: getRouterParams(event, { decode: true }), meta }
}

/**
 * Authenticates the session's token for the path's namespace (null when signed out or no longer
 * valid) and counts the request against the token's API rate limit: pages call the same domain
 * with the same token, so a browser is no way around the limit.
 */
async function resolve(event: H3Event, { services, session, params, meta }: Loaded): Promise<DashboardRequest | null> {
  const ns = params.ns ?? ''
  if (!session.data.token) return null
  let principal: Principal
  try {
    principal = await authenticate(services, session.data.token, ns)
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'unauthenticated') return null
    throw error
  }
  await enforceTokenRateLimit(event, services, 'api', principal)
  const viewer: Viewer = { ns, principal, csrf: await csrfToken(session) }
  const ctx: DashboardCall = { services, ns, principal, meta }
  const query = new URL(event.node.req.url ?? '/', 'http://localhost').searchParams
  return { event, services, session, ctx, viewer, params, query }
}

const toSignIn = (event: H3Event, ns?: string) => {
  const next = event.method === 'GET' ? (event.node.req.url ?? '') : ''
  const search = new URLSearchParams({ ...(ns ? { namespace: ns } : {}), ...(next ? { next } : {}) })
  return sendRedirect(event, `/sign-in?${search}`, 303)
}

/** A page: signed-in viewers only; errors become error pages. A page may send the viewer elsewhere instead. */
export function page(render: (req: DashboardRequest) => Promise<Html | { redirect: string }>): DashboardHandler {
  return async (event, getServices) => {
    const loaded = await load(event, getServices)
    const { session, params } = loaded
    let req: DashboardRequest | null = null
    try {
      req = await resolve(event, loaded)
      if (!req) return toSignIn(event, params.ns)
      req.flash = await takeFlash(session)
      const result = await render(req)
      if (!(result instanceof Html)) {
        // The flash was taken for a page that is not shown: it waits for the one that is.
        if (req.flash) await setFlash(session, req.flash)
        return sendRedirect(event, result.redirect, 302)
      }
      return sendHtml(event, result)
    } catch (error) {
      return errorPage(event, error, loaded.services.config.trustProxy, req?.viewer)
    }
  }
}

/** A file a page offers for download: saved under `filename` rather than shown. */
export interface Download {
  filename: string
  contentType: string
  body: string
}

/** A download: signed-in viewers only, like a page; a refusal is an error page. */
export function download(render: (req: DashboardRequest) => Promise<Download>): DashboardHandler {
  return async (event, getServices) => {
    const loaded = await load(event, getServices)
    let req: DashboardRequest | null = null
    try {
      req = await resolve(event, loaded)
      if (!req) return toSignIn(event, loaded.params.ns)
      const file = await render(req)
      setResponseHeader(event, 'content-type', file.contentType)
      setResponseHeader(
        event,
        'content-disposition',
        `attachment; filename="${file.filename.replace(/[^\w.-]/g, '_')}"`,
      )
      setResponseHeader(event, 'cache-control', 'no-store')
      return file.body
    } catch (error) {
      return errorPage(event, error, loaded.services.config.trustProxy, req?.viewer)
    }
  }
}

/**
 * A state-changing form post: the CSRF token is checked before anything else (403 without
 * it), then the token is authenticated and the domain function runs under the same
 * permission module as the API. Every outcome is audited like the API's.
 */
export function action(
  audit: AuditSpec,
  run: (req: DashboardRequest, form: Form) => Promise<ActionResult>,
): DashboardHandler {
  return async (event, getServices) => {
    const loaded = await load(event, getServices)
    const { services, session, params } = loaded
    let req: DashboardRequest | null = null
    let status = 500
    let failure: { message: string; permission?: string } | null = null
    try {
      const form = await readForm(event)
      if (!verifyCsrf(session, form.get(CSRF_FIELD))) {
        status = 403
        return errorPage(
          event,
          new DomainError(
            'forbidden',
            'csrf_failed',
            'the form is missing its CSRF token or it does not match this session; reload the page and try again',
          ),
          services.config.trustProxy,
        )
      }
      req = await resolve(event, loaded)
      if (!req) return toSignIn(event, params.ns)
      const result = await run(req, form)
      if ('redirect' in result) {
        status = 303
        if (result.flash) await setFlash(session, { kind: 'ok', text: result.flash })
        return sendRedirect(event, result.redirect, 303)
      }
      status = result.status ?? 200
      // A form shown again with its errors is a refused action, audited as one.
      if (result.problem) failure = { message: result.problem.detail, permission: result.problem.permission }
      else if (status >= 400) failure = { message: 'the form has invalid fields' }
      return sendHtml(event, result.page, status)
    } catch (error) {
      const { problem } = toProblem(error)
      status = problem.status
      failure = { message: problem.detail, permission: problem.permission }
      return errorPage(event, error, loaded.services.config.trustProxy, req?.viewer)
    } finally {
      if (req) {
        await recordAudit(services, {
          ns: req.ctx.ns,
          action: audit.action,
          outcome: failure ? 'failure' : 'success',
          statusCode: status,
          principal: req.ctx.principal,
          meta: req.ctx.meta,
          resourceType: audit.resourceType,
          resourceId: audit.resourceId?.(params),
          errorMessage: failure?.message,
          eventData: failure?.permission ? { permission: failure.permission } : undefined,
        }).catch((error) => logger.error('audit write failed', { error: String(error) }))
      }
    }
  }
}
