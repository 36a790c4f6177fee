import { isDeepStrictEqual } from 'node:util'
import type { Firewall, FirewallPermission, Upstream } from './schema'
import { endpointsMovedWithSecrets, holdsSecrets } from './credential-binding'

type Comparable = Pick<
  Firewall,
  'name' | 'description' | 'ecosystem' | 'upstreams' | 'rules' | 'exceptions' | 'permissions' | 'extends'
>

function withoutSecrets(upstream: Upstream) {
  const { credentials, artifactCredentials, ...rest } = upstream
  return {
    ...rest,
    credentialFields: Object.keys(credentials ?? {}).sort(),
    artifactHosts: (artifactCredentials ?? []).map((a) => a.host),
  }
}

// Only upstreams that hold a secret: adding or removing one without any is plain configuration.
function secretsOf(upstreams: Upstream[]) {
  return upstreams
    .filter(holdsSecrets)
    .map((u) => ({ id: u.id, credentials: u.credentials ?? null, artifacts: u.artifactCredentials ?? [] }))
}

function diffById<T extends { id: string }>(label: string, before: T[], after: T[]): string[] {
  const previous = new Map(before.map((item) => [item.id, item]))
  const next = new Map(after.map((item) => [item.id, item]))
  const parts: string[] = []
  for (const [id, item] of next) {
    if (!previous.has(id)) parts.push(`${label} ${id} added`)
    else if (!isDeepStrictEqual(previous.get(id), item)) parts.push(`${label} ${id} changed`)
  }
  for (const id of previous.keys()) if (!next.has(id)) parts.push(`${label} ${id} removed`)
  return parts
}

/** A short human summary of what changed, for the history. */
export function summarizeChange(before: Comparable, after: Comparable): string {
  const parts: string[] = []
  for (const field of ['name', 'description', 'ecosystem', 'permissions', 'extends'] as const) {
    if (!isDeepStrictEqual(before[field], after[field])) parts.push(`${field} changed`)
  }
  parts.push(...diffById('upstream', before.upstreams.map(withoutSecrets), after.upstreams.map(withoutSecrets)))
  if (!isDeepStrictEqual(secretsOf(before.upstreams), secretsOf(after.upstreams))) parts.push('credentials changed')
  parts.push(...diffById('rule', before.rules, after.rules))
  parts.push(...diffById('exception', before.exceptions, after.exceptions))
  return parts.length ? parts.join('; ') : 'no change'
}

export function isSameConfig(before: Comparable, after: Comparable): boolean {
  return summarizeChange(before, after) === 'no change'
}

/**
 * Does the change alter a stored secret, or move one to another endpoint (docs/security.md:
 * credentials follow their endpoint)? Either needs `fw:update:credentials`.
 */
export function touchesCredentials(
  before: Pick<Comparable, 'upstreams'>,
  after: Pick<Comparable, 'upstreams'>,
): boolean {
  return (
    !isDeepStrictEqual(secretsOf(before.upstreams), secretsOf(after.upstreams)) ||
    endpointsMovedWithSecrets(before.upstreams, after.upstreams).length > 0
  )
}

/** The permissions a replacement needs, from what it changes. */
export function permissionsForChange(before: Comparable, after: Comparable): FirewallPermission[] {
  const needed = new Set<FirewallPermission>()
  for (const field of ['name', 'description', 'ecosystem', 'permissions', 'extends'] as const) {
    if (!isDeepStrictEqual(before[field], after[field])) needed.add('fw:update:config')
  }
  if (!isDeepStrictEqual(before.upstreams.map(withoutSecrets), after.upstreams.map(withoutSecrets)))
    needed.add('fw:update:config')
  if (touchesCredentials(before, after)) needed.add('fw:update:credentials')
  if (!isDeepStrictEqual(before.rules, after.rules)) needed.add('fw:update:rule')
  if (!isDeepStrictEqual(before.exceptions, after.exceptions)) needed.add('fw:update:exception')
  return [...needed]
}
