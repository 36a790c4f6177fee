import { randomBytes } from 'node:crypto'
import { useSession, type H3Event } from 'h3'
import type { DashboardPorts } from './ports'
import type { AppConfig } from '../app/config'
import { requestProtocol } from '../http/request-origin'
import type { TrustProxy } from '../http/trust-proxy'
import { serviceSecret } from '../auth/service-secret'
import type { OidcTransaction } from '../auth/oidc/client'

/**
 * The dashboard session: an h3 sealed cookie (iron, AES-256 + HMAC) holding the access token,
 * its namespace, the CSRF secret and a random session id. The id names a record in storage
 * (storage/repositories/dashboard-sessions.ts) that every request checks and sign-out deletes,
 * so a copied cookie stops working at sign-out in every process sharing the storage. The
 * token never sits in plain text anywhere but the browser's encrypted cookie. Revoking the
 * token ends every session using it, because each request authenticates the token again.
 */
interface SessionData {
  token?: string
  /** Id of the server-side record; a token without a live record is ignored. */
  sid?: string
  ns?: string
  /** Session-bound CSRF secret (see csrf.ts). */
  csrf?: string
  /** One message shown on the next page (post-redirect-get). */
  flash?: Flash
}

export interface Flash {
  kind: 'ok' | 'error'
  text: string
}

const SESSION_COOKIE = 'pf_dashboard'
/** Sessions end after 12 hours even while the token stays valid. */
const MAX_AGE_SECONDS = 12 * 60 * 60
/** How long a provider sign-in session's token lives: exactly as long as the session may. */
export const SESSION_MAX_AGE_MS = MAX_AGE_SECONDS * 1000

/**
 * A provider sign-in in flight (state, nonce, PKCE verifier): its own sealed cookie,
 * SameSite=Lax because the provider's redirect back to /auth/callback is a cross-site
 * navigation, on which a Strict cookie is not sent. Ten minutes, read once.
 */
const LOGIN_COOKIE = 'pf_oidc_login'
const LOGIN_MAX_AGE_SECONDS = 10 * 60

interface LoginData {
  login?: OidcTransaction & { next?: string }
}

/** What the session cookies use: the records, the sealing secret, and the edge's TRUST_PROXY (Secure flag). */
type SessionPorts = Pick<DashboardPorts, 'clock' | 'dashboardSessions' | 'secrets'> & {
  config: Pick<AppConfig, 'trustProxy' | 'dashboardSessionSecret'>
}

/** The session records on the services' storage. */
const sessionRecords = (services: Pick<DashboardPorts, 'dashboardSessions'>) => services.dashboardSessions

/** The sealing password: the service secret (auth/service-secret.ts). */
const sessionPassword = (services: SessionPorts) => serviceSecret(services)

function openSession(event: H3Event, password: string, trustProxy: TrustProxy) {
  return useSession<SessionData>(event, {
    name: SESSION_COOKIE,
    password,
    maxAge: MAX_AGE_SECONDS,
    // Not Secure on plain http (a laptop on localhost); always HttpOnly and SameSite=Strict.
    cookie: { httpOnly: true, sameSite: 'strict', secure: requestProtocol(event, trustProxy) === 'https', path: '/' },
  })
}

export type DashboardSession = Awaited<ReturnType<typeof openSession>>

/**
 * The session of this request (created empty when absent). A token whose session record is
 * gone (signed out, expired) is dropped here, so every page, action and live stream sees a
 * signed-out visitor.
 */
export async function dashboardSession(event: H3Event, services: SessionPorts): Promise<DashboardSession> {
  const session = await openSession(event, await sessionPassword(services), services.config.trustProxy)
  const { token, sid } = session.data
  if (token && !(sid && (await sessionRecords(services).find(sid, services.clock.now())))) {
    await session.update({ token: undefined, sid: undefined, flash: undefined })
  }
  return session
}

/** Signs `token` in: a new session id and record (any previous one of this browser ends). */
export async function startSession(
  services: Pick<DashboardPorts, 'clock' | 'dashboardSessions' | 'secrets'>,
  session: DashboardSession,
  token: string,
  ns: string,
): Promise<void> {
  const previous = session.data.sid
  const sid = randomBytes(32).toString('base64url')
  const now = services.clock.now()
  await sessionRecords(services).create(sid, {
    ns,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + MAX_AGE_SECONDS * 1000).toISOString(),
  })
  if (previous) await sessionRecords(services).delete(previous)
  // Sessions nobody signed out of would pile up; sign-ins are rare enough to sweep on.
  void sessionRecords(services)
    .prune(now)
    .catch(() => undefined)
  // A fresh CSRF secret on sign-in: a token planted before sign-in is worthless after it.
  await session.update({ token, ns, sid, csrf: randomBytes(32).toString('base64url'), flash: undefined })
}

/** Signs out: the record goes first (every copy of the cookie dies with it), then the cookie. */
export async function endSession(
  services: Pick<DashboardPorts, 'clock' | 'dashboardSessions' | 'secrets'>,
  session: DashboardSession,
): Promise<void> {
  if (session.data.sid) await sessionRecords(services).delete(session.data.sid)
  await session.clear()
}

/** Takes the flash message out of the session (shown once). */
export async function takeFlash(session: DashboardSession): Promise<Flash | undefined> {
  const flash = session.data.flash
  if (flash) await session.update((data) => ({ ...data, flash: undefined }))
  return flash
}

export async function setFlash(session: DashboardSession, flash: Flash): Promise<void> {
  await session.update((data) => ({ ...data, flash }))
}

function openLogin(event: H3Event, password: string, trustProxy: TrustProxy) {
  return useSession<LoginData>(event, {
    name: LOGIN_COOKIE,
    password,
    maxAge: LOGIN_MAX_AGE_SECONDS,
    cookie: { httpOnly: true, sameSite: 'lax', secure: requestProtocol(event, trustProxy) === 'https', path: '/auth/' },
  })
}

/** Keeps a provider sign-in's checks until its callback (any earlier one of this browser is replaced). */
export async function saveLoginTransaction(
  event: H3Event,
  services: SessionPorts,
  login: NonNullable<LoginData['login']>,
): Promise<void> {
  const cookie = await openLogin(event, await sessionPassword(services), services.config.trustProxy)
  await cookie.update({ login })
}

/** Takes the sign-in in flight out of its cookie (a callback is answered once); undefined when none. */
export async function takeLoginTransaction(event: H3Event, services: SessionPorts): Promise<LoginData['login']> {
  const cookie = await openLogin(event, await sessionPassword(services), services.config.trustProxy)
  const login = cookie.data.login
  await cookie.clear()
  return login
}
