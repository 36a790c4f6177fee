import { invalid } from '../common/errors'
import { REDACTED, type Credentials, type Firewall, type FirewallInput, type Upstream } from './schema'

function redactCredentials(credentials: Credentials): Credentials {
  return Object.fromEntries(Object.keys(credentials).map((key) => [key, REDACTED])) as Credentials
}

function redactUpstream(upstream: Upstream): Upstream {
  return {
    ...upstream,
    ...(upstream.credentials ? { credentials: redactCredentials(upstream.credentials) } : {}),
    ...(upstream.artifactCredentials
      ? { artifactCredentials: upstream.artifactCredentials.map((a) => ({ host: a.host, credentials: { token: REDACTED } })) }
      : {}),
  }
}

/** The firewall as every read shows it: each credential value replaced by `[REDACTED]`. */
export function redactFirewall(firewall: Firewall): Firewall {
  return { ...firewall, upstreams: firewall.upstreams.map(redactUpstream) }
}

/**
 * Replaces `[REDACTED]` values in an incoming configuration with the stored ones, so a
 * client can PUT back what it read. A placeholder with nothing stored behind it is an error.
 */
export function restoreRedacted(input: FirewallInput, stored: Firewall | null): FirewallInput {
  const storedUpstreams = new Map((stored?.upstreams ?? []).map((u) => [u.id, u]))
  const upstreams = input.upstreams.map((upstream, index) => {
    const previous = storedUpstreams.get(upstream.id)
    let credentials = upstream.credentials
    if (credentials) {
      const restored: Record<string, string> = {}
      for (const [field, value] of Object.entries(credentials)) {
        if (value !== REDACTED) {
          restored[field] = value
          continue
        }
        const kept = (previous?.credentials as Record<string, string> | undefined)?.[field]
        if (!kept) throw invalid('redacted_without_value', `upstreams[${index}].credentials.${field} is ${REDACTED} but no value is stored`, [{ path: `upstreams[${index}].credentials.${field}`, message: 'no stored value to keep' }])
        restored[field] = kept
      }
      credentials = restored as Credentials
    }
    const artifactCredentials = upstream.artifactCredentials?.map((artifact, artifactIndex) => {
      if (artifact.credentials.token !== REDACTED) return artifact
      const kept = previous?.artifactCredentials?.find((a) => a.host === artifact.host)?.credentials.token
      if (!kept) throw invalid('redacted_without_value', `upstreams[${index}].artifactCredentials[${artifactIndex}] is ${REDACTED} but no value is stored`, [{ path: `upstreams[${index}].artifactCredentials[${artifactIndex}].credentials.token`, message: 'no stored value to keep' }])
      return { host: artifact.host, credentials: { token: kept } }
    })
    return { ...upstream, ...(credentials ? { credentials } : {}), ...(artifactCredentials ? { artifactCredentials } : {}) }
  })
  return { ...input, upstreams }
}
