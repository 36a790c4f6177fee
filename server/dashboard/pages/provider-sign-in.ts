import { getQuery, sendRedirect, type H3Event } from 'h3'
import type { DashboardPorts, DashboardServices } from '../ports'
import { openRequest } from '../../http/edge'
import { requestOrigin } from '../../http/request-origin'
import { recordAudit } from '../../http/audit'
import { OidcRefusal } from '../../auth/oidc/client'
import { CLIENT_ID_PATTERN } from '../../common/ids'
import { DomainError } from '../../common/errors'
import { issueToken, pruneSessionTokens } from '../../namespace/tokens'
import { recordProviderSignIn } from '../../namespace/users'
import { authenticate } from '../../auth/authenticate'
import { logger } from '../../app/logger'
import { errorPage } from '../handler'
import { toProblem } from '../../http/problem'
import { href } from '../html'
import { safeNext } from '../request'
import {
  dashboardSession,
  saveLoginTransaction,
  SESSION_MAX_AGE_MS,
  startSession,
  takeLoginTransaction,
} from '../session'

/**
 * Sign-in through the OpenID Connect provider (OIDC_ISSUER): `/auth/sign-in` sends the browser
 * to the provider with state, nonce and a PKCE challenge; `/auth/callback` checks them, makes
 * the user known in OIDC_NAMESPACE with the teams their groups name, and starts an ordinary
 * dashboard session on a personal token minted for it (revoked at sign-out, expiring with it).
 */

const notConfigured = () =>
  new DomainError('not_found', 'oidc_not_configured', 'sign-in through a provider is not set up (OIDC_ISSUER)')
const refused = (message: string) => new DomainError('unauthenticated', 'oidc_sign_in_refused', message)

/** `{dashboard_url}/auth/callback`: DASHBOARD_URL when set, else this request's origin. */
const redirectUri = (event: H3Event, services: DashboardPorts) =>
  `${services.config.dashboardUrl ?? requestOrigin(event, services.config.trustProxy)}/auth/callback`

/** GET /auth/sign-in */
export async function startProviderSignIn(event: H3Event, getServices: DashboardServices) {
  const services = await getServices()
  openRequest(event, services.config.trustProxy)
  if (!services.oidc) return errorPage(event, notConfigured(), services.config.trustProxy)
  let begun
  try {
    begun = await services.oidc.begin(redirectUri(event, services))
  } catch (error) {
    // The provider unreachable since the start: a 503 page that points to token sign-in.
    return errorPage(event, error, services.config.trustProxy)
  }
  const { url, transaction } = begun
  const next = safeNext(typeof getQuery(event).next === 'string' ? String(getQuery(event).next) : undefined)
  await saveLoginTransaction(event, services, { ...transaction, ...(next ? { next } : {}) })
  return sendRedirect(event, url.href, 303)
}

/** GET /auth/callback: every refusal is a 401 page and leaves the browser signed out. */
export async function providerCallback(event: H3Event, getServices: DashboardServices) {
  const services = await getServices()
  const { meta } = openRequest(event, services.config.trustProxy)
  const oidc = services.oidc
  if (!oidc) return errorPage(event, notConfigured(), services.config.trustProxy)
  const ns = oidc.settings.namespace
  const login = await takeLoginTransaction(event, services)
  let userId: string | undefined
  try {
    if (!login) throw refused('no sign-in is in progress in this browser (or it took over 10 minutes); start again')
    const search = new URL(event.node.req.url ?? '/', 'http://localhost').search
    const identity = await oidc.complete(search, login).catch((error: unknown) => {
      throw error instanceof OidcRefusal ? refused(`the provider's answer was refused: ${error.message}`) : error
    })
    if (typeof identity.userId !== 'string' || !CLIENT_ID_PATTERN.test(identity.userId))
      throw refused(`the claim "${oidc.settings.userClaim}" is missing or is not a valid user id`)
    userId = identity.userId
    await recordProviderSignIn(services, ns, userId, identity.groups, identity.subject)
    const { material } = await issueToken(services, {
      ns,
      kind: 'personal',
      name: 'dashboard session',
      principalId: userId,
      createdBy: 'oidc',
      expiresAt: new Date(services.clock.now() + SESSION_MAX_AGE_MS).toISOString(),
      dashboardSession: true,
    })
    void pruneSessionTokens(services, ns).catch((error) =>
      logger.warn('pruning expired session tokens failed', { error: String(error) }),
    )
    const session = await dashboardSession(event, services)
    await startSession(services, session, material, ns)
    const principal = await authenticate(services, material, ns)
    await audit(services, ns, meta, 'success', 303, principal.id, principal)
    const next = login.next
    const home = href('namespaces', ns)
    return sendRedirect(event, next && next.startsWith(`/namespaces/${encodeURIComponent(ns)}/`) ? next : home, 303)
  } catch (error) {
    // The status of the page errorPage answers with (401, 503 for a provider not reached, 500).
    const status = toProblem(error).problem.status
    await audit(services, ns, meta, 'failure', status, userId, null, (error as Error).message)
    return errorPage(event, error, services.config.trustProxy)
  }
}

async function audit(
  services: DashboardPorts,
  ns: string,
  meta: ReturnType<typeof openRequest>['meta'],
  outcome: 'success' | 'failure',
  statusCode: number,
  userId: string | undefined,
  principal: Awaited<ReturnType<typeof authenticate>> | null,
  errorMessage?: string,
) {
  await recordAudit(services, {
    ns,
    action: 'session.create',
    outcome,
    statusCode,
    principal,
    meta,
    resourceType: 'session',
    resourceId: userId,
    errorMessage,
    eventData: { method: 'oidc' },
  }).catch((error) => logger.error('audit write failed', { error: String(error) }))
}
