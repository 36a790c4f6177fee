import { createHash } from 'node:crypto'
import type { PackageVersionFacts } from '../../firewall/rules/types'
import { collectLicenseSetIds } from '../../firewall/rules/validate'
import type { Upstream } from '../../firewall/schema'
import { decideArtifact, loadPolicy, type Policy } from '../artifact-decision'
import { firstFound } from '../upstream/selection'
import { recordDecision } from '../decision-recorder'
import { IntegrityMismatch } from '../upstream/integrity'
import type { ProxyRequest } from '../proxy-request'
import { fetchProjectList, fetchProjectPage, pypiAuthorization, type ProjectPage, type PyFile } from './simple-index'
import { versionOfFile } from './paths'
import { contentTypeOf, negotiateFormat, renderProject, renderRoot } from './render'
import { RegistryError, sendBytes } from '../responses'
import { callUpstream, UpstreamUnavailable } from '../upstream/client'
import { pypiUrl } from './endpoint'
import { factUnreadable, fetchFactDocument } from '../fact-fetch'
import { declaredLicense } from './license'

function factsOf(page: ProjectPage, project: string, file: PyFile): PackageVersionFacts {
  return {
    ecosystem: 'pypi',
    packageName: page.name,
    version: versionOfFile(project, file.filename) ?? '',
    ...(file.uploadTime ? { published: file.uploadTime } : {}),
  }
}

async function resolvePage(
  request: ProxyRequest,
  project: string,
): Promise<{ value: ProjectPage; upstream: Upstream }> {
  const found = await firstFound(request.scope, (upstream) => fetchProjectPage(request.scope, upstream, project))
  if (!found)
    throw new RegistryError(404, `project ${project} was not found on any upstream of firewall ${request.firewall.id}`)
  return found
}

function sendText(request: ProxyRequest, body: string, contentType: string): void {
  // One URL serves several representations (PEP 691): caches must key on Accept.
  request.response.setHeader('vary', 'Accept')
  sendBytes(request, 200, Buffer.from(body), contentType)
}

/**
 * `GET simple/{project}/`: the first upstream's page with files of versions hidden by
 * `versions` rules removed (metadata filtering: no log entries, no events), URLs on the proxy.
 */
export async function serveProject(request: ProxyRequest, project: string): Promise<void> {
  const [{ value: page }, policy] = await Promise.all([resolvePage(request, project), loadPolicy(request)])
  const visible: ProjectPage = {
    ...page,
    files: page.files.filter((file) => policy.visible(factsOf(page, project, file))),
  }
  const format = negotiateFormat(request.headers.accept)
  sendText(request, renderProject(visible, request.baseUrl, format), contentTypeOf(format))
}

/** `GET simple/`: the union of the upstreams' project names. */
export async function serveRoot(request: ProxyRequest): Promise<void> {
  const names = new Set<string>()
  // An unreachable upstream leaves its names out of the union; its failure is still logged.
  const unreachable = (error: unknown) => {
    if (error instanceof UpstreamUnavailable) request.scope.failures?.push(error)
    return null
  }
  for (const upstream of request.firewall.upstreams)
    for (const name of (await fetchProjectList(request.scope, upstream).catch(unreachable)) ?? []) names.add(name)
  const format = negotiateFormat(request.headers.accept)
  sendText(request, renderRoot([...names].sort(), request.baseUrl, format), contentTypeOf(format))
}

/**
 * The license of a release from the upstream's JSON API (`pypi/{name}/{version}/json`).
 * Undefined when the upstream has none to give (no JSON API, unknown release, no license
 * declared): the license rule decides about a missing one. When the lookup fails (5xx,
 * timeout, unreachable, not JSON) the download fails closed (fact-fetch.ts): a deny-list rule
 * must never let a package through because its license could not be read.
 */
async function licenseOf(
  request: ProxyRequest,
  upstream: Upstream,
  facts: PackageVersionFacts,
): Promise<string | undefined> {
  const url = pypiUrl(
    upstream,
    `pypi/${encodeURIComponent(facts.packageName)}/${encodeURIComponent(facts.version)}/json`,
  )
  const what = `the license of ${facts.packageName} ${facts.version} (a license rule needs it)`
  const doc = await fetchFactDocument(
    what,
    upstream,
    () =>
      callUpstream(request.scope.transport, upstream, url, {
        headers: { accept: 'application/json' },
        authorization: pypiAuthorization(upstream),
        timeoutMs: request.scope.timeoutMs,
      }),
    request.scope.failures,
  )
  if (doc === undefined) return undefined
  const info = doc && typeof doc === 'object' ? (doc as { info?: unknown }).info : undefined
  if (!info || typeof info !== 'object') throw factUnreadable(what, upstream.id, 'no "info" object')
  return declaredLicense(info as Record<string, unknown>)
}

const usesLicense = (policy: Policy) =>
  policy.chain.some((layer) => layer.firewall.rules.some((rule) => collectLicenseSetIds(rule.selector).length > 0))

/** Upstream credentials go only to the upstream's own origin (or a host named in artifactCredentials). */
function fileAuthorization(upstream: Upstream, url: string): string | undefined {
  const host = new URL(url).host.toLowerCase()
  const artifact = upstream.artifactCredentials?.find(
    (entry) => entry.host.toLowerCase() === host || entry.host.toLowerCase() === new URL(url).hostname.toLowerCase(),
  )
  if (artifact) return `Bearer ${artifact.credentials.token}`
  return new URL(upstream.endpoint).origin === new URL(url).origin ? pypiAuthorization(upstream) : undefined
}

async function fetchFile(request: ProxyRequest, upstream: Upstream, file: PyFile): Promise<Buffer | null> {
  const sha256 = file.hashes.sha256
  const integrity = sha256 ? `sha256-${Buffer.from(sha256, 'hex').toString('base64')}` : undefined
  if (upstream.cached && integrity) {
    const hit = await request.scope.cache.getTarball(integrity)
    if (hit) return hit
  }
  const response = await callUpstream(request.scope.transport, upstream, file.url, {
    authorization: fileAuthorization(upstream, file.url),
    timeoutMs: request.scope.timeoutMs,
    kind: 'artifact',
  })
  if (!response.ok) {
    await response.arrayBuffer().catch(() => undefined)
    return null
  }
  const bytes = Buffer.from(await response.arrayBuffer())
  if (sha256 && createHash('sha256').update(bytes).digest('hex') !== sha256)
    throw new IntegrityMismatch(`${file.filename} from ${upstream.id} does not match its sha256`)
  if (upstream.cached && integrity) await request.scope.cache.setTarball(integrity, bytes)
  return bytes
}

/**
 * `GET files/{project}/{filename}`: the download decision (`download` and `versions` rules),
 * recorded before a 403 and alongside the upstream fetch when allowed; sha256 verified.
 */
export async function serveFile(request: ProxyRequest, project: string, filename: string): Promise<void> {
  const [{ value: page, upstream }, policy] = await Promise.all([resolvePage(request, project), loadPolicy(request)])
  const file = page.files.find((f) => f.filename === filename)
  if (!file) throw new RegistryError(404, `${filename} is not a file of ${project}`)
  const facts = factsOf(page, project, file)
  if (usesLicense(policy)) {
    const license = await licenseOf(request, upstream, facts)
    if (license) facts.license = license
  }
  const record = await decideArtifact(request, policy, 'download', facts, upstream.id)
  const recorded = recordDecision(request.services, record)
  const bytes = await fetchFile(request, upstream, file).finally(() => recorded.catch(() => undefined))
  await recorded
  if (!bytes) throw new RegistryError(404, `${filename}: the upstream has no such file`)
  sendBytes(request, 200, bytes, 'application/octet-stream')
}
