import type { Firewall } from '../firewall/schema'
import type { Clock } from '../common/clock'
import type { RegistryCacheStore } from '../../storage/repositories/registry-cache'
import { eachOwn, own } from '../common/own'
import { TimeSlice } from '../common/time-slice'
import { RegistryCache } from './cache'
import { factsFromManifest } from './npm/facts'
import { resolvePackument } from './npm/upstreams'
import { UpstreamUnavailable } from './upstream/client'
import type { UpstreamTransport } from './upstream/transport'
import type { UpstreamScope } from './upstream/selection'
import type { VersionEntry, VersionList } from './version-list'
import { pypiVersions } from './pypi/versions'
import { nugetVersions } from './nuget/versions'
import { mavenVersions } from './maven/versions'

/**
 * What the firewall's upstreams say about every version of one package, for a reviewer's facts
 * panel: fetched through the same upstream order, cache and address policy as the proxy, but
 * bounded by a short timeout and never failing the page: an upstream that cannot be reached
 * is an answer of its own (`unreachable`).
 */
export type PackageVersions =
  ({ kind: 'found'; upstream: string } & VersionList) | { kind: 'not_found' } | { kind: 'unreachable'; reason: string }

/** What fetching needs: the upstream cache store, the transport and the clock. */
export interface PackageVersionPorts {
  clock: Clock
  registryCache: RegistryCacheStore
  upstreamTransport: UpstreamTransport
}

/** How long the panel waits for the upstreams altogether. */
export const PACKAGE_FACTS_TIMEOUT_MS = 4000

async function npmVersions(scope: UpstreamScope, name: string): Promise<(VersionList & { upstream: string }) | null> {
  const resolved = await resolvePackument(scope, name)
  if (!resolved) return null
  const { packument } = resolved
  // Version by version, taking turns: the upstream decides how many there are (UPSTREAM_MAX_MEMBERS at most).
  const versions: VersionEntry[] = []
  const slice = new TimeSlice()
  await eachOwn(
    packument.versions,
    (version, manifest) => versions.push(factsFromManifest(name, version, manifest ?? {}, packument)),
    slice,
  )
  const latest = own(packument['dist-tags'], 'latest')
  return { upstream: resolved.upstream.id, versions, ...(latest ? { latest } : {}) }
}

/** The ecosystem's own lookup: the same upstream order, cache and documents its proxy reads. */
async function ecosystemVersions(
  services: PackageVersionPorts,
  ns: string,
  firewall: Firewall,
  name: string,
  version: string | undefined,
  timeoutMs: number,
): Promise<PackageVersions> {
  const scope: UpstreamScope = {
    ns,
    firewall,
    cache: new RegistryCache(services.registryCache, services.clock),
    transport: services.upstreamTransport,
    timeoutMs,
  }
  const found =
    firewall.ecosystem === 'npm'
      ? await npmVersions(scope, name)
      : firewall.ecosystem === 'pypi'
        ? await pypiVersions(scope, name, version)
        : firewall.ecosystem === 'nuget'
          ? await nugetVersions(scope, name)
          : await mavenVersions(scope, name, version)
  return found ? { kind: 'found', ...found } : { kind: 'not_found' }
}

/**
 * Every version of `name` the firewall's upstreams hold, with what the ecosystem tells of each
 * (publish time, license, install scripts; `notes` say what it does not). `version`, the
 * requested one, is where a per-release fact (a PyPI license) is fetched. Never throws for an
 * upstream failure.
 * @example const answer = await packageVersions(services, 'default', firewall, 'left-pad', '1.3.0')
 */
export async function packageVersions(
  services: PackageVersionPorts,
  ns: string,
  firewall: Firewall,
  name: string,
  version?: string,
  timeoutMs = PACKAGE_FACTS_TIMEOUT_MS,
): Promise<PackageVersions> {
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<PackageVersions>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'unreachable', reason: `no answer within ${timeoutMs} ms` }), timeoutMs)
  })
  try {
    return await Promise.race([ecosystemVersions(services, ns, firewall, name, version, timeoutMs), timedOut])
  } catch (error) {
    if (error instanceof UpstreamUnavailable)
      return { kind: 'unreachable', reason: `${error.upstream}: ${error.reason}` }
    return { kind: 'unreachable', reason: (error as Error).message || 'the upstream answer could not be read' }
  } finally {
    clearTimeout(timer)
  }
}
