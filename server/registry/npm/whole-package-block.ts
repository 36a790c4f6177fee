import type { IncomingHttpHeaders } from 'node:http'
import { own } from '../../common/own'
import type { Decision } from '../../firewall/rules/evaluate'
import { recordDecision } from '../decision-recorder'
import type { ProxyRequest } from '../proxy-request'
import { blockedMessage, RegistryError } from '../responses'
import { factsFromManifest } from './facts'
import type { Resolved } from './upstreams'
import type { BlockedVersions } from './notice-packument'
import type { Manifest, Packument } from './types'

/**
 * pnpm 12 (Rust) prints nothing of a refused tarball but its status and the URL it asked for, the
 * packument's `dist.tarball` (not a redirect's target). It does print the reason phrase of a
 * refused packument, which it fetches once:
 * `Failed to fetch metadata from <url>: HTTP status client error (403 <reason>)`. So when every
 * version of a package is blocked, pnpm 12's packument request is where the block is decided.
 * pnpm up to 11 prints a tarball's reason phrase (`GET <url>: <reason> - 403`) and is left alone.
 */
export function refusesBlockedPackument(headers: IncomingHttpHeaders): boolean {
  const major = /^pnpm\/(\d{1,4})\./i.exec(String(headers['user-agent'] ?? ''))?.[1]
  return major !== undefined && Number(major) >= 12
}

/** A version of a packument and the decision that blocks it. */
export interface VersionBlock {
  version: string
  manifest: Manifest
  decision: Decision
}

/**
 * The block of the packument's `latest` version (else of its first) when every version is
 * blocked; null when one is not, or there is none.
 */
export function blockOfEveryVersion(packument: Packument, versions: BlockedVersions): VersionBlock | null {
  if (!versions.every) return null
  const latest = own(packument['dist-tags'], 'latest')
  const named = latest !== undefined && versions.blocked.has(latest) ? latest : versions.blocked.keys().next().value
  const manifest = named === undefined ? undefined : own(packument.versions, named)
  const decision = named === undefined ? undefined : versions.blocked.get(named)
  return named !== undefined && manifest && decision ? { version: named, manifest, decision } : null
}

/**
 * Refuses pnpm's packument (403, the block message in the reason phrase) when every version is
 * blocked, as `versions` decides them (`download` and `versions` rules, as a tarball request
 * does; render.ts keeps them per render key). The block of `latest` is logged once, under this
 * request's id: the id pnpm prints.
 */
export async function refuseWhenEveryVersionBlocked(
  request: ProxyRequest,
  resolved: Resolved,
  versions: BlockedVersions,
): Promise<void> {
  const { packument } = resolved
  const block = blockOfEveryVersion(packument, versions)
  if (!block) return
  const { version, manifest, decision } = block
  await recordDecision(request.services, {
    ns: request.ns,
    firewall: request.firewall,
    phase: 'download',
    decision,
    facts: factsFromManifest(packument.name, version, manifest, packument),
    upstream: resolved.upstream.id,
    principal: request.principal,
    meta: request.meta,
  })
  throw new RegistryError(403, blockedMessage(decision, packument.name, version, request))
}
