import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { DashboardSession } from './session'

/**
 * Session-bound CSRF tokens: one random secret per session, echoed by every state-changing
 * form in the hidden field `_csrf` and compared in constant time. SameSite=Strict already
 * keeps the cookie off cross-site posts; the token also covers same-site attackers and
 * browsers without SameSite.
 */
export const CSRF_FIELD = '_csrf'

/** The session's token, created on first use. */
export async function csrfToken(session: DashboardSession): Promise<string> {
  if (session.data.csrf) return session.data.csrf
  const csrf = randomBytes(32).toString('base64url')
  await session.update((data) => ({ ...data, csrf }))
  return csrf
}

/** True when `submitted` equals the session's token (constant time; false when either is missing). */
export function verifyCsrf(session: DashboardSession, submitted: unknown): boolean {
  const expected = session.data.csrf
  if (typeof expected !== 'string' || typeof submitted !== 'string' || !submitted) return false
  // Hashing first gives equal lengths, so timingSafeEqual never throws or leaks the length.
  const digest = (value: string) => createHash('sha256').update(value).digest()
  return timingSafeEqual(digest(expected), digest(submitted))
}
