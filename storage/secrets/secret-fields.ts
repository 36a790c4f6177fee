import type { StoredFirewall, StoredUpstream } from '../model/firewall'
import type { WebhookRecord } from '../model/webhook'
import { keys } from '../repositories/keys'

/**
 * Where the secrets of each stored record are, and the context each one is bound to. The
 * repositories seal on write and open on read through these, so domain code sees plaintext;
 * rotation re-seals through the same maps.
 */

/** Applied to each secret value with its context; returns the value to keep. */
export type SecretTransform = (value: string, context: string) => string

const context = (...parts: string[]) => JSON.stringify(parts)

function mapUpstream<U extends StoredUpstream>(
  upstream: U,
  ns: string,
  firewallId: string,
  transform: SecretTransform,
): U {
  const credentials = upstream.credentials
    ? (Object.fromEntries(
        Object.entries(upstream.credentials).map(([field, value]) => [
          field,
          typeof value === 'string'
            ? transform(value, context('firewall', ns, firewallId, upstream.id, 'credentials', field))
            : value,
        ]),
      ) as U['credentials'])
    : undefined
  const artifactCredentials = upstream.artifactCredentials?.map((artifact) => ({
    ...artifact,
    credentials: {
      ...artifact.credentials,
      token: transform(
        artifact.credentials.token,
        context('firewall', ns, firewallId, upstream.id, 'artifactCredentials', artifact.host),
      ),
    },
  }))
  return {
    ...upstream,
    ...(credentials ? { credentials } : {}),
    ...(artifactCredentials ? { artifactCredentials } : {}),
  }
}

/** The firewall `ns/firewallId` (a document or a history version's config) with every credential transformed. */
export function mapFirewallSecrets<F extends StoredFirewall>(
  firewall: F,
  ns: string,
  firewallId: string,
  transform: SecretTransform,
): F {
  if (!firewall.upstreams?.some((u) => u.credentials || u.artifactCredentials?.length)) return firewall
  return {
    ...firewall,
    upstreams: firewall.upstreams.map((upstream) => mapUpstream(upstream, ns, firewallId, transform)),
  }
}

/** The webhook `ns/id` with its current and previous signing secrets and its custom header values transformed. */
export function mapWebhookSecrets(
  record: WebhookRecord,
  ns: string,
  id: string,
  transform: SecretTransform,
): WebhookRecord {
  // Custom header values are often the receiver's credentials: sealed like the signing secret.
  const headers = record.headers
    ? Object.fromEntries(
        Object.entries(record.headers).map(([name, value]) => [
          name,
          transform(value, context('webhook', ns, id, 'headers', name.toLowerCase())),
        ]),
      )
    : undefined
  return {
    ...record,
    ...(headers ? { headers } : {}),
    secret: transform(record.secret, context('webhook', ns, id, 'secret')),
    ...(record.previousSecret !== undefined
      ? { previousSecret: transform(record.previousSecret, context('webhook', ns, id, 'previousSecret')) }
      : {}),
  }
}

/** Storage key of the generated dashboard session secret (one per storage), and its context. */
export const SESSION_SECRET_KEY = keys.dashboardSessionSecret
export const SESSION_SECRET_CONTEXT = context('dashboard', 'session-secret')
