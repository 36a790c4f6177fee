import { createHash, randomBytes } from 'node:crypto'
import type { DashboardSessionRepository } from '../../storage/repositories/dashboard-sessions'
import type { SecretBox } from '../../storage/secrets/secret-box'
import { SESSION_SECRET_CONTEXT } from '../../storage/secrets/secret-fields'
import type { AppConfig } from '../app/config'

/** Where the service secret lives: the generated one is stored beside the dashboard sessions. */
export interface ServiceSecretPorts {
  dashboardSessions: Pick<DashboardSessionRepository, 'sessionSecret'>
  secrets: SecretBox
  config: Pick<AppConfig, 'dashboardSessionSecret'>
}

const resolved = new WeakMap<ServiceSecretPorts, Promise<string>>()

/**
 * The secret every process of one deployment shares: `DASHBOARD_SESSION_SECRET` (hashed to a
 * fixed length), else a random secret created once per data dir / Redis and kept in storage, so
 * restarts and other processes agree. Dashboard cookies are sealed with it; other uses derive
 * their own key from it (e.g. registry/npm/tarball-notice.ts), never use it as is.
 */
export function serviceSecret(services: ServiceSecretPorts): Promise<string> {
  let secret = resolved.get(services)
  if (!secret) {
    secret = resolveSecret(services)
    resolved.set(services, secret)
    secret.catch(() => resolved.delete(services))
  }
  return secret
}

async function resolveSecret(services: ServiceSecretPorts): Promise<string> {
  const configured = services.config.dashboardSessionSecret
  if (configured) return createHash('sha256').update(configured).digest('hex')
  // Create-if-absent in one transaction: two processes starting together agree on one secret.
  // Stored sealed with SECRETS_KEY when it is set (storage/secrets/), like every other secret.
  return services.dashboardSessions.sessionSecret(
    (stored) => services.secrets.open(stored, SESSION_SECRET_CONTEXT),
    () => {
      const secret = randomBytes(32).toString('hex')
      return { secret, stored: services.secrets.seal(secret, SESSION_SECRET_CONTEXT) }
    },
  )
}
