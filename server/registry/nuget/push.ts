import type { Upstream } from '../../firewall/schema'
import { decideArtifact, loadPolicy, packageEvent } from '../artifact-decision'
import { forgetDocument, relayResponse, requirePublishTarget, upstreamSecret } from '../upstream/artifacts'
import { recordDecision } from '../decision-recorder'
import { crlfDelimiters, parseMultipart } from '../multipart'
import { pushedPackageIdentity } from './package-identity'
import { encodeMultipart } from '../multipart-encode'
import { UploadRefused } from '../upload-refusal'
import { upstreamResources } from './resources'
import type { ProxyRequest } from '../proxy-request'
import { readBodyBytes } from '../request-body'
import { RegistryError } from '../responses'
import { callUpstream, upstreamAuthorization } from '../upstream/client'

/** The publish target's PackagePublish URL, or 405 when its service index has none. */
async function publishUrl(request: ProxyRequest, target: Upstream): Promise<string> {
  const url = (await upstreamResources(request.scope, target)).packagePublish
  if (!url) throw new RegistryError(405, `publish target ${target.id} offers no PackagePublish/2.0.0 resource`)
  return url
}

/** The target's own API key (its credentials), never the client's token. */
function targetHeaders(target: Upstream, extra: Record<string, string> = {}): Record<string, string> {
  const key = upstreamSecret(target)
  return { 'x-nuget-protocol-version': '4.1.0', ...(key ? { 'x-nuget-apikey': key } : {}), ...extra }
}

const forget = (request: ProxyRequest, id: string) =>
  Promise.all(
    ['versions', 'registration'].map((kind) => forgetDocument(request.scope, `nuget:${kind}:${id.toLowerCase()}`)),
  )

/**
 * `PUT api/v2/package` (`nuget push`: multipart, the .nupkg as the file part): the upload
 * decision for the nuspec's id and version (read as the feed reads them, see
 * package-identity.ts; 400 and nothing forwarded when the package is ambiguous), then that
 * one part, re-encoded, to the target's PackagePublish resource with the target's API key;
 * a 2xx emits `package.published`.
 */
export async function pushPackage(request: ProxyRequest): Promise<void> {
  const target = requirePublishTarget(request)
  const contentType = String(request.headers['content-type'] ?? '')
  // CRLF delimiters: what the old nuget client writes with a bare LF is relayed conforming.
  const raw = crlfDelimiters(await readBodyBytes(request, request.maxBodyBytes), contentType)
  const packages = (await parseMultipart(raw, contentType))?.filter(
    (p) => p.filename !== undefined || p.name === 'package',
  )
  const part = packages?.[0]
  if (!part) throw new RegistryError(400, 'expected a multipart body holding a .nupkg with a .nuspec (id and version)')
  if (packages.length > 1)
    throw new UploadRefused('upload_ambiguous', 'one package', `${packages.length} files`, 'a push holds one package')
  const nuspec = await pushedPackageIdentity(part.data, part.filename)
  const policy = await loadPolicy(request)
  const facts = {
    ecosystem: 'nuget' as const,
    packageName: nuspec.id,
    version: nuspec.version,
    published: new Date(policy.ctx.now).toISOString(),
    ...(nuspec.license ? { license: nuspec.license } : {}),
  }
  const record = await decideArtifact(request, policy, 'upload', facts, target.id)
  // The package that was judged, alone and re-encoded: the feed cannot read another part.
  const forwarded = encodeMultipart([part])
  const response = await callUpstream(request.scope.transport, target, await publishUrl(request, target), {
    method: 'PUT',
    body: forwarded.body,
    headers: targetHeaders(target, { 'content-type': forwarded.contentType }),
    authorization: 'username' in (target.credentials ?? {}) ? upstreamAuthorization(target) : undefined,
    timeoutMs: request.scope.timeoutMs,
  })
  await recordDecision(
    request.services,
    record,
    response.ok ? [packageEvent(request, 'package.published', facts, target.id)] : [],
  )
  if (response.ok) await forget(request, nuspec.id)
  await relayResponse(request, response)
}

/**
 * `DELETE api/v2/package/{id}/{version}` (`nuget delete`, an unlist on nuget.org): forwarded
 * to the target; a 2xx emits `package.unlisted`. Not a decision: no rule phase covers it.
 */
export async function unlistPackage(request: ProxyRequest, id: string, version: string): Promise<void> {
  const target = requirePublishTarget(request)
  const response = await callUpstream(
    request.scope.transport,
    target,
    `${await publishUrl(request, target)}/${encodeURIComponent(id)}/${encodeURIComponent(version)}`,
    {
      method: 'DELETE',
      headers: targetHeaders(target),
      authorization: 'username' in (target.credentials ?? {}) ? upstreamAuthorization(target) : undefined,
      timeoutMs: request.scope.timeoutMs,
    },
  )
  if (response.ok) {
    const event = packageEvent(request, 'package.unlisted', { ecosystem: 'nuget', packageName: id, version }, target.id)
    await request.services.events.append([event])
    await forget(request, id)
  }
  await relayResponse(request, response)
}
