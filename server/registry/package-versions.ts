import type { Firewall } from '../firewall/schema'
import type { PackageVersionFacts } from '../firewall/rules/types'
import type { Clock } from '../common/clock'
import type { RegistryCacheStore } from '../../storage/repositories/registry-cache'
import { own } from '../common/own'
import { RegistryCache } from './cache'
import { factsFromManifest } from './npm/facts'
import { resolvePackument } from './npm/upstreams'
import { UpstreamUnavailable } from './upstream/client'
import type { UpstreamTransport } from './upstream/transport'

/**
 * What the firewall's upstreams say about every version of one package, for a reviewer's facts
 * panel: fetched through the same upstream order, cache and address policy as the proxy, but
 * bounded by a short timeout and never failing the page: an upstream that cannot be reached
 * is an answer of its own (`unreachable`).
 */
export type PackageVersions =
  | { kind: 'found'; upstream: string; versions: PackageVersionFacts[]; latest?: string }
  | { kind: 'not_found' }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'unsupported'; ecosystem: string }

/** What fetching needs: the upstream cache store, the transport and the clock. */
export interface PackageVersionPorts {
  clock: Clock
  registryCache: RegistryCacheStore
  upstreamTransport: UpstreamTransport
}

/** How long the panel waits for the upstreams altogether. */
export const PACKAGE_FACTS_TIMEOUT_MS = 4000

async function npmVersions(
  services: PackageVersionPorts,
  ns: string,
  firewall: Firewall,
  name: string,
  timeoutMs: number,
): Promise<PackageVersions> {
  const scope = {
    ns,
    firewall,
    cache: new RegistryCache(services.registryCache, services.clock),
    transport: services.upstreamTransport,
    timeoutMs,
  }
  const resolved = await resolvePackument(scope, name)
  if (!resolved) return { kind: 'not_found' }
  const { packument } = resolved
  const versions = Object.entries(packument.versions ?? {}).map(([version, manifest]) =>
    factsFromManifest(name, version, manifest ?? {}, packument),
  )
  const latest = own(packument['dist-tags'], 'latest')
  return { kind: 'found', upstream: resolved.upstream.id, versions, ...(latest ? { latest } : {}) }
}

/**
 * Every version of `name` the firewall's upstreams hold, with publish time, license and
 * scripts (npm; other ecosystems answer `unsupported`). Never throws for an upstream failure.
 * @example const answer = await packageVersions(services, 'default', firewall, 'left-pad')
 */
export async function packageVersions(
  services: PackageVersionPorts,
  ns: string,
  firewall: Firewall,
  name: string,
  timeoutMs = PACKAGE_FACTS_TIMEOUT_MS,
): Promise<PackageVersions> {
  if (firewall.ecosystem !== 'npm') return { kind: 'unsupported', ecosystem: firewall.ecosystem }
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<PackageVersions>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'unreachable', reason: `no answer within ${timeoutMs} ms` }), timeoutMs)
  })
  try {
    return await Promise.race([npmVersions(services, ns, firewall, name, timeoutMs), timedOut])
  } catch (error) {
    if (error instanceof UpstreamUnavailable)
      return { kind: 'unreachable', reason: `${error.upstream}: ${error.reason}` }
    return { kind: 'unreachable', reason: (error as Error).message || 'the upstream answer could not be read' }
  } finally {
    clearTimeout(timer)
  }
}
