import { invalid } from '../common/errors'
import { sameEndpoint } from './credential-binding'
import { REDACTED, type Credentials, type Firewall, type FirewallInput, type Upstream } from './schema'

function redactCredentials(credentials: Credentials): Credentials {
  return Object.fromEntries(Object.keys(credentials).map((key) => [key, REDACTED])) as Credentials
}

function redactUpstream(upstream: Upstream): Upstream {
  return {
    ...upstream,
    ...(upstream.credentials ? { credentials: redactCredentials(upstream.credentials) } : {}),
    ...(upstream.artifactCredentials
      ? {
          artifactCredentials: upstream.artifactCredentials.map((a) => ({
            host: a.host,
            credentials: { token: REDACTED },
          })),
        }
      : {}),
  }
}

/** The firewall as every read shows it: each credential value replaced by `[REDACTED]`. */
export function redactFirewall(firewall: Firewall): Firewall {
  return { ...firewall, upstreams: firewall.upstreams.map(redactUpstream) }
}

/** A `[REDACTED]` placeholder that could not be replaced by a stored value, and why. */
interface Unrestored {
  path: string
  /** `no_value`: nothing stored behind it; `endpoint_changed`: the stored value belongs to another endpoint. */
  reason: 'no_value' | 'endpoint_changed'
}

interface Restored {
  /** The input with every restorable placeholder replaced; the others stay `[REDACTED]`. */
  input: FirewallInput
  unrestored: Unrestored[]
}

/**
 * Replaces `[REDACTED]` values in an incoming configuration with the stored ones, so a client
 * can PUT back what it read. A stored value is kept only for the same upstream id at the same
 * endpoint (and, for artifact tokens, the same host): a placeholder never carries a secret to a
 * new endpoint. Placeholders that cannot be restored are reported, not
 * thrown, so the caller can check permissions first (a 403 comes before a 400).
 */
export function restoreRedacted(input: FirewallInput, stored: Firewall | null): Restored {
  const storedUpstreams = new Map((stored?.upstreams ?? []).map((u) => [u.id, u]))
  const unrestored: Unrestored[] = []
  const upstreams = input.upstreams.map((upstream, index) => {
    const previous = storedUpstreams.get(upstream.id)
    const moved = previous !== undefined && !sameEndpoint(previous.endpoint, upstream.endpoint)
    const keep = (path: string, kept: string | undefined): string => {
      if (kept && !moved) return kept
      unrestored.push({ path, reason: kept ? 'endpoint_changed' : 'no_value' })
      return REDACTED
    }
    let credentials = upstream.credentials
    if (credentials) {
      const restored: Record<string, string> = {}
      for (const [field, value] of Object.entries(credentials)) {
        const kept =
          previous?.credentials && Object.hasOwn(previous.credentials, field)
            ? (previous.credentials as Record<string, string>)[field]
            : undefined
        restored[field] = value === REDACTED ? keep(`upstreams[${index}].credentials.${field}`, kept) : value
      }
      credentials = restored as Credentials
    }
    const artifactCredentials = upstream.artifactCredentials?.map((artifact, artifactIndex) => {
      if (artifact.credentials.token !== REDACTED) return artifact
      const kept = previous?.artifactCredentials?.find((a) => a.host === artifact.host)?.credentials.token
      const path = `upstreams[${index}].artifactCredentials[${artifactIndex}].credentials.token`
      return { host: artifact.host, credentials: { token: keep(path, kept) } }
    })
    return {
      ...upstream,
      ...(credentials ? { credentials } : {}),
      ...(artifactCredentials ? { artifactCredentials } : {}),
    }
  })
  return { input: { ...input, upstreams }, unrestored }
}

/** Refuses (400) a configuration that still holds placeholders after `restoreRedacted`. */
export function refuseUnrestored(unrestored: readonly Unrestored[]): void {
  if (unrestored.length === 0) return
  const errors = unrestored.map(({ path, reason }) => ({
    path,
    message:
      reason === 'endpoint_changed'
        ? 'the endpoint changed: give the credentials again for the new endpoint'
        : 'no stored value to keep',
  }))
  if (unrestored.some((entry) => entry.reason === 'endpoint_changed')) {
    const paths = unrestored.filter((entry) => entry.reason === 'endpoint_changed').map((entry) => entry.path)
    throw invalid(
      'credentials_required_for_new_endpoint',
      `${paths.join(', ')}: ${REDACTED} keeps a stored secret only at its own endpoint; ` +
        'give the credentials again for the new endpoint',
      errors,
    )
  }
  const paths = errors.map((e) => e.path).join(', ')
  throw invalid('redacted_without_value', `${paths} is ${REDACTED} but no value is stored`, errors)
}
