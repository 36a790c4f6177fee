import { createHash, randomBytes } from 'node:crypto'
import { getRequestProtocol, useSession, type H3Event } from 'h3'
import type { Services } from '../app/services'
import { SESSION_SECRET_CONTEXT, SESSION_SECRET_KEY as SECRET_KEY } from '../../storage/secrets/secret-fields'

/**
 * The dashboard session: an h3 sealed cookie (iron, AES-256 + HMAC) holding the access token,
 * its namespace and the CSRF secret. Nothing about a session lives in storage, so any process
 * sharing the storage (Redis scale-out) accepts it, and the token never sits in plain text
 * anywhere but the browser's encrypted cookie. Revoking the token ends every session using it,
 * because each request authenticates the token again.
 */
export interface SessionData {
  token?: string
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

export const SESSION_COOKIE = 'pf_dashboard'
/** Sessions end after 12 hours even while the token stays valid. */
const MAX_AGE_SECONDS = 12 * 60 * 60

const passwords = new WeakMap<Services, Promise<string>>()

/**
 * The sealing password: `DASHBOARD_SESSION_SECRET` (hashed to a fixed length), else a random
 * secret created once per data dir / Redis and kept in storage so restarts keep sessions valid.
 */
export function sessionPassword(services: Services): Promise<string> {
  let password = passwords.get(services)
  if (!password) {
    password = resolvePassword(services)
    passwords.set(services, password)
    password.catch(() => passwords.delete(services))
  }
  return password
}

async function resolvePassword(services: Services): Promise<string> {
  const configured = process.env.DASHBOARD_SESSION_SECRET
  if (configured) return createHash('sha256').update(configured).digest('hex')
  // Create-if-absent in one transaction: two processes starting together agree on one secret.
  return services.backend.transact([SECRET_KEY], (values) => {
    // Stored sealed with SECRETS_KEY when it is set (storage/secrets/), like every other secret.
    const existing = values.get(SECRET_KEY) as string | null
    if (existing) return { writes: {}, result: services.secrets.open(existing, SESSION_SECRET_CONTEXT) }
    const secret = randomBytes(32).toString('hex')
    return { writes: { set: { [SECRET_KEY]: services.secrets.seal(secret, SESSION_SECRET_CONTEXT) } }, result: secret }
  })
}

/** The session of this request (created empty when absent). */
export async function dashboardSession(event: H3Event, services: Services) {
  return useSession<SessionData>(event, {
    name: SESSION_COOKIE,
    password: await sessionPassword(services),
    maxAge: MAX_AGE_SECONDS,
    // Not Secure on plain http (a laptop on localhost); always HttpOnly and SameSite=Strict.
    cookie: { httpOnly: true, sameSite: 'strict', secure: getRequestProtocol(event) === 'https', path: '/' },
  })
}

export type DashboardSession = Awaited<ReturnType<typeof dashboardSession>>

/** Takes the flash message out of the session (shown once). */
export async function takeFlash(session: DashboardSession): Promise<Flash | undefined> {
  const flash = session.data.flash
  if (flash) await session.update((data) => ({ ...data, flash: undefined }))
  return flash
}

export async function setFlash(session: DashboardSession, flash: Flash): Promise<void> {
  await session.update((data) => ({ ...data, flash }))
}
