import type { PackageVersionFacts } from '../../firewall/rules/types'
import { normalizeNuGet } from '../../firewall/rules/versions/nuget'
import type { Upstream } from '../../firewall/schema'
import { decideArtifact, loadPolicy, type Policy } from '../artifact-decision'
import { cachedDocument } from '../upstream/artifacts'
import { firstFound } from '../upstream/selection'
import { recordDecision } from '../decision-recorder'
import type { NugetPath } from './paths'
import {
  leafFacts,
  leavesByVersion,
  registrationLeaves,
  renderRegistration,
  rewriteLeaf,
  visibleLeaves,
  type RegistrationLeaf,
} from './registration'
import { fetchNugetJson, proxyServiceIndex, upstreamResources } from './resources'
import type { ProxyRequest } from '../proxy-request'
import { RegistryError, sendBytes, sendJson } from '../responses'
import { artifactAuthorization, callUpstream, UpstreamUnavailable } from '../upstream/client'
import { factUnavailable } from '../fact-fetch'

interface Resolved {
  upstream: Upstream
  /** Flat-container versions, lower-case normalised. */
  versions: string[]
  /** Registration leaves by version, when the upstream has registrations. */
  leaves: Map<string, RegistrationLeaf>
}

/**
 * The upstream that has `id` (lookup order: internal first, so an id an internal feed holds
 * is never fetched publicly), with its flat-container version list and registration leaves.
 */
async function resolvePackage(request: ProxyRequest, id: string): Promise<Resolved> {
  const found = await firstFound(request.scope, (upstream) =>
    cachedDocument(request.scope, upstream, `nuget:versions:${id}`, async () => {
      const base = (await upstreamResources(request.scope, upstream)).packageBaseAddress
      return base ? fetchNugetJson<{ versions?: string[] }>(request.scope, upstream, `${base}${id}/index.json`) : null
    }),
  )
  if (!found)
    throw new RegistryError(404, `package ${id} was not found on any upstream of firewall ${request.firewall.id}`)
  const leaves = (await registrationFacts(request, found.upstream, id)) ?? []
  const versions = (found.value.versions ?? []).map((v) => normalizeNuGet(v)?.toLowerCase() ?? v.toLowerCase())
  return { upstream: found.upstream, versions, leaves: leavesByVersion(leaves) }
}

/** The registration leaves, where publish times and licenses come from; a failed fetch names them. */
async function registrationFacts(
  request: ProxyRequest,
  upstream: Upstream,
  id: string,
): Promise<RegistrationLeaf[] | null> {
  try {
    return await registrationLeaves(request.scope, upstream, id)
  } catch (error) {
    if (!(error instanceof UpstreamUnavailable)) throw error
    // Logged with the request's other failed calls (each once, however often it was noted).
    request.scope.failures?.push(error)
    throw factUnavailable(
      `the publish times and licenses of ${id} (its registration)`,
      `upstream ${upstream.id}`,
      error.reason,
    )
  }
}

function factsOf(resolved: Resolved, id: string, version: string): PackageVersionFacts {
  const leaf = resolved.leaves.get(version)
  return leaf ? leafFacts(leaf) : { ecosystem: 'nuget', packageName: id, version }
}

const hidden = (request: ProxyRequest, id: string, version: string) =>
  new RegistryError(404, `${id} ${version} is not available through firewall ${request.firewall.id}`)

/** `GET v3-flatcontainer/{id}/index.json`: the version list with `versions`-phase rules applied (no events). */
async function serveVersions(request: ProxyRequest, policy: Policy, id: string): Promise<void> {
  const resolved = await resolvePackage(request, id)
  sendJson(request, 200, { versions: resolved.versions.filter((v) => policy.visible(factsOf(resolved, id, v))) })
}

async function fetchContent(request: ProxyRequest, upstream: Upstream, path: string): Promise<Response> {
  const base = (await upstreamResources(request.scope, upstream)).packageBaseAddress!
  // The base is the service index's: credentials only to the upstream's origin (or an artifact host).
  return callUpstream(request.scope.transport, upstream, `${base}${path}`, {
    authorization: artifactAuthorization(upstream, `${base}${path}`),
    timeoutMs: request.scope.timeoutMs,
    kind: path.endsWith('.nupkg') ? 'artifact' : 'metadata',
  })
}

/**
 * `GET .../{id}.{version}.nupkg`: the download decision (publish time and license from the
 * registration), recorded before a 403 and alongside the fetch when allowed. The `.nuspec`
 * follows `versions` rules silently, like the index that lists the version.
 */
async function serveContent(
  request: ProxyRequest,
  policy: Policy,
  path: Extract<NugetPath, { kind: 'content' }>,
): Promise<void> {
  const { id, version } = path
  const resolved = await resolvePackage(request, id)
  if (!resolved.versions.includes(version)) throw new RegistryError(404, `${id} ${version} was not found`)
  const facts = factsOf(resolved, id, version)
  const file = path.file === 'nupkg' ? `${id}/${version}/${id}.${version}.nupkg` : `${id}/${version}/${id}.nuspec`
  if (path.file === 'nuspec') {
    if (!policy.visible(facts)) throw hidden(request, id, version)
  } else {
    const record = await decideArtifact(request, policy, 'download', facts, resolved.upstream.id)
    await recordDecision(request.services, record)
  }
  const response = await fetchContent(request, resolved.upstream, file)
  if (!response.ok) {
    await response.arrayBuffer().catch(() => undefined)
    throw new RegistryError(404, `${file}: the upstream has no such file`)
  }
  sendBytes(
    request,
    200,
    Buffer.from(await response.arrayBuffer()),
    path.file === 'nupkg' ? 'application/octet-stream' : 'application/xml',
  )
}

/** `GET v3/registration/{id}/index.json` and `.../{version}.json`: filtered, URLs on the proxy. */
async function serveRegistration(request: ProxyRequest, policy: Policy, id: string, version?: string): Promise<void> {
  const resolved = await resolvePackage(request, id)
  const visible = await visibleLeaves(resolved.leaves.values(), (leaf) => policy.visible(leafFacts(leaf)))
  if (version === undefined) {
    if (resolved.leaves.size === 0) throw new RegistryError(404, `no registration for ${id}`)
    return sendJson(request, 200, await renderRegistration(request.baseUrl, id, visible))
  }
  const leaf = visible.find((l) => (normalizeNuGet(l.catalogEntry.version)?.toLowerCase() ?? '') === version)
  if (!leaf) throw hidden(request, id, version)
  sendJson(request, 200, rewriteLeaf(request.baseUrl, id, leaf))
}

/** The read side of a NuGet firewall. */
export async function serveNugetRead(request: ProxyRequest, path: NugetPath): Promise<void> {
  if (path.kind === 'service-index') return sendJson(request, 200, proxyServiceIndex(request.baseUrl))
  const policy = await loadPolicy(request)
  if (path.kind === 'versions') return serveVersions(request, policy, path.id)
  if (path.kind === 'content') return serveContent(request, policy, path)
  if (path.kind === 'registration') return serveRegistration(request, policy, path.id)
  if (path.kind === 'leaf') return serveRegistration(request, policy, path.id, path.version)
  throw new RegistryError(405, `${request.method} ${request.path} is not supported`)
}
