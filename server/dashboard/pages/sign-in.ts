import { CLIENT_ID_PATTERN } from '../../common/ids'
import { authenticateCaller, isRateLimited, openRequest } from '../../http/edge'
import { getQuery, sendRedirect, setResponseHeader, setResponseStatus, type H3Event } from 'h3'
import type { DashboardPorts, DashboardServices } from '../ports'
import { authenticate, namespaceOfToken } from '../../auth/authenticate'
import { DomainError } from '../../common/errors'
import { csrfToken, CSRF_FIELD, verifyCsrf } from '../csrf'
import { errorPage } from '../handler'
import { href, html } from '../html'
import { layout } from '../layout'
import { readForm, safeNext } from '../request'
import { dashboardSession, endSession, startSession } from '../session'
import { hashToken } from '../../auth/tokens'

/** Sign-in with an access token, sign-out, and the `/` redirect. */

interface SignInView {
  /** The provider's name when OIDC_ISSUER is set: its button comes first. */
  provider?: string
  csrf: string
  namespace: string
  next?: string
  error?: string
  notice?: string
}

function signInPage(view: SignInView) {
  const body = html`<section class="card narrow">
    <h1>Sign in</h1>
    ${view.notice ? html`<div class="flash ok" role="status">${view.notice}</div>` : ''}
    ${view.error ? html`<div class="flash error" role="alert">${view.error}</div>` : ''}
    ${
      view.provider
        ? html`<p>
              <a
                class="button primary"
                href="/auth/sign-in${view.next ? html`?next=${encodeURIComponent(view.next)}` : ''}"
                >Sign in with ${view.provider}</a
              >
            </p>
            <h2>Or with an access token</h2>`
        : ''
    }
    <p class="muted">Use a personal or service access token. It is kept only in an encrypted, HttpOnly cookie.</p>
    <form method="post" action="/sign-in" class="stack">
      <input type="hidden" name="${CSRF_FIELD}" value="${view.csrf}" />
      ${view.next ? html`<input type="hidden" name="next" value="${view.next}" />` : ''}
      <label
        >Namespace (optional: taken from the token)
        <input
          name="namespace"
          value="${view.namespace}"
          autocomplete="organization"
          pattern="[A-Za-z0-9](?:[A-Za-z0-9._]|-){0,127}"
      /></label>
      <label
        >Access token
        <input name="token" type="password" required autocomplete="current-password" placeholder="fwp_… or fws_…"
      /></label>
      <button class="button primary" type="submit">Sign in</button>
    </form>
  </section>`
  return layout({ title: 'Sign in', body })
}

function send(event: H3Event, markup: string, status = 200) {
  setResponseStatus(event, status)
  setResponseHeader(event, 'content-type', 'text/html; charset=utf-8')
  setResponseHeader(event, 'cache-control', 'no-store')
  return markup
}

/** The namespace home: it chooses the page by what the viewer may do (routes.ts). */
const home = (ns: string) => href('namespaces', ns)

/** GET /sign-in */
export async function showSignIn(event: H3Event, getServices: DashboardServices) {
  const services = await getServices()
  const session = await dashboardSession(event, services)
  const query = getQuery(event)
  const view: SignInView = {
    provider: services.oidc?.displayName,
    csrf: await csrfToken(session),
    namespace: String(query.namespace ?? session.data.ns ?? services.config.bootstrap.namespace),
    next: safeNext(typeof query.next === 'string' ? query.next : undefined),
    notice: query['signed-out'] !== undefined ? 'You are signed out.' : undefined,
  }
  return send(event, signInPage(view).value)
}

/** POST /sign-in: the token is checked exactly as the API checks a bearer token. */
export async function submitSignIn(event: H3Event, getServices: DashboardServices) {
  const services = await getServices()
  const { meta } = openRequest(event, services.config.trustProxy)
  const session = await dashboardSession(event, services)
  const form = await readForm(event)
  if (!verifyCsrf(session, form.get(CSRF_FIELD))) {
    return errorPage(
      event,
      new DomainError('forbidden', 'csrf_failed', 'the sign-in form expired; reload the page and try again'),
      services.config.trustProxy,
    )
  }
  const token = form.text('token') ?? ''
  // The token knows its namespace; the field only matters for a token that is not valid at all.
  const namespace = (await namespaceOfToken(services, token)) ?? form.text('namespace') ?? ''
  const next = safeNext(form.get('next'))
  try {
    if (!CLIENT_ID_PATTERN.test(namespace))
      throw new DomainError('unauthenticated', 'unauthenticated', 'unknown namespace')
    // The same per-address limit on failures as the API: the sign-in form is no way around it.
    await authenticateCaller(services, token, namespace, meta)
  } catch (error) {
    const refused = isRateLimited(error)
    if (!refused && (!(error instanceof DomainError) || error.kind !== 'unauthenticated')) throw error
    if (refused) for (const [name, value] of Object.entries(error.headers)) event.node.res.setHeader(name, value)
    const message = refused
      ? `too many failed sign-ins from this address; retry in ${error.headers['retry-after']}s`
      : `Sign-in failed: ${(error as Error).message}.`
    const view = {
      provider: services.oidc?.displayName,
      csrf: await csrfToken(session),
      namespace,
      next,
      error: message,
    }
    return send(event, signInPage(view).value, refused ? 429 : 401)
  }
  await startSession(services, session, token, namespace)
  const target = next && next.startsWith(`/namespaces/${encodeURIComponent(namespace)}/`) ? next : home(namespace)
  return sendRedirect(event, target, 303)
}

/** POST /sign-out: CSRF-checked (a forged sign-out is a nuisance attack), then the session ends on the server. */
export async function submitSignOut(event: H3Event, getServices: DashboardServices) {
  const services = await getServices()
  const session = await dashboardSession(event, services)
  const form = await readForm(event)
  if (!verifyCsrf(session, form.get(CSRF_FIELD))) {
    return errorPage(
      event,
      new DomainError('forbidden', 'csrf_failed', 'the sign-out form is missing its CSRF token'),
      services.config.trustProxy,
    )
  }
  const { ns, token } = session.data
  await endSession(services, session)
  // A provider sign-in's token lives for its session only: it ends here too.
  if (token) await endSessionToken(services, token)
  return sendRedirect(event, `/sign-in?signed-out${ns ? `&namespace=${encodeURIComponent(ns)}` : ''}`, 303)
}

/** GET /: the namespace home when the session's token still works, else the sign-in page. */
export async function rootRedirect(event: H3Event, getServices: DashboardServices) {
  const services = await getServices()
  const session = await dashboardSession(event, services)
  const { token, ns } = session.data
  if (token && ns) {
    try {
      await authenticate(services, token, ns)
      return sendRedirect(event, home(ns), 302)
    } catch {
      // fall through to sign-in
    }
  }
  return sendRedirect(event, '/sign-in', 302)
}

async function endSessionToken(services: DashboardPorts, token: string) {
  const record = await services.tokens.findByHash(hashToken(token))
  if (record?.dashboardSession && !record.revokedAt)
    await services.tokens.revoke(record, new Date(services.clock.now()).toISOString())
}
