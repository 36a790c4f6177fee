import type { IncomingHttpHeaders } from 'node:http'
import { own } from '../../common/own'
import { TimeSlice } from '../../common/time-slice'
import { evaluate, type Decision } from '../../firewall/rules/evaluate'
import { recordDecision } from '../decision-recorder'
import type { evaluationContext, firewallChain } from '../firewall-chain'
import type { ProxyRequest } from '../proxy-request'
import { blockedMessage, RegistryError } from '../responses'
import { factsFromManifest } from './facts'
import type { Resolved } from './upstreams'
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
 * blocked; null when one is not, or there is none. `latest` is decided first and the search stops
 * at the first allowed version, so a package with an allowed `latest` costs one decision.
 * @example await blockOfEveryVersion(doc, (v, m) => evaluate(chain, ['download', 'versions'], factsFromManifest(doc.name, v, m, doc), ctx))
 */
export async function blockOfEveryVersion(
  packument: Packument,
  decide: (version: string, manifest: Manifest) => Decision,
  slice = new TimeSlice(),
): Promise<VersionBlock | null> {
  const latest = own(packument['dist-tags'], 'latest')
  const latestManifest = latest === undefined ? undefined : own(packument.versions, latest)
  let first: VersionBlock | null = null
  if (latest !== undefined && latestManifest) {
    const decision = decide(latest, latestManifest)
    if (decision.outcome !== 'blocked') return null
    first = { version: latest, manifest: latestManifest, decision }
  }
  for (const version of Object.keys(packument.versions ?? {})) {
    const manifest = own(packument.versions, version)
    if (version === latest || !manifest) continue
    const decision = decide(version, manifest)
    if (decision.outcome !== 'blocked') return null
    first ??= { version, manifest, decision }
    await slice.step()
  }
  return first
}

/**
 * Refuses pnpm's packument (403, the block message in the reason phrase) when every version is
 * blocked, deciding as a tarball request does (`download` and `versions` rules, exactly, not
 * from the render cache). The block of `latest` is logged once, under this request's id: the id
 * pnpm prints.
 */
export async function refuseWhenEveryVersionBlocked(
  request: ProxyRequest,
  resolved: Resolved,
  chain: Awaited<ReturnType<typeof firewallChain>>,
  ctx: Awaited<ReturnType<typeof evaluationContext>>,
): Promise<void> {
  const { packument } = resolved
  const block = await blockOfEveryVersion(packument, (version, manifest) =>
    evaluate(chain, ['download', 'versions'], factsFromManifest(packument.name, version, manifest, packument), ctx),
  )
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
