import type { Upstream } from '../../firewall/schema'
import { decideArtifact, loadPolicy, packageEvent } from '../artifact-decision'
import { relayResponse, requirePublishTarget } from '../upstream/artifacts'
import { recordDecision } from '../decision-recorder'
import { fetchMavenFile } from './download'
import { checksumOf, mergeMetadata } from './metadata'
import { checkMetadataCoordinates } from './deploy-identity'
import type { MavenPath } from './paths'
import type { ProxyRequest } from '../proxy-request'
import { readBodyBytes } from '../request-body'
import { blockedMessage, RegistryError } from '../responses'
import { callUpstream, upstreamAuthorization, upstreamUrl } from '../upstream/client'

function put(request: ProxyRequest, target: Upstream, path: string, body: Buffer): Promise<Response> {
  return callUpstream(request.scope.transport, target, upstreamUrl(target, path), {
    method: 'PUT',
    body,
    headers: { 'content-type': String(request.headers['content-type'] ?? 'application/octet-stream') },
    authorization: upstreamAuthorization(target),
    timeoutMs: request.scope.timeoutMs,
  })
}

/**
 * `PUT` of an artifact file: the upload decision for `groupId:artifactId` at the directory's
 * version, then the bytes to the publish target; a 2xx emits one `package.published` with
 * `file` = the path (Maven uploads one file per request). Checksum and signature companions
 * are refused when their file would be, and otherwise forwarded without a log entry.
 */
export async function putMavenFile(request: ProxyRequest, path: Extract<MavenPath, { kind: 'file' }>): Promise<void> {
  const target = requirePublishTarget(request)
  const body = await readBodyBytes(request, request.maxBodyBytes)
  const policy = await loadPolicy(request)
  const facts = {
    ecosystem: 'maven' as const,
    packageName: path.name,
    version: path.version,
    published: new Date(policy.ctx.now).toISOString(),
  }
  if (path.companionOf) {
    const decision = policy.decide(['upload'], facts)
    if (decision.outcome === 'blocked')
      throw new RegistryError(403, blockedMessage(decision, path.name, path.version, request))
    return relayResponse(request, await put(request, target, path.path, body))
  }
  const record = await decideArtifact(request, policy, 'upload', facts, target.id)
  const response = await put(request, target, path.path, body)
  await recordDecision(
    request.services,
    record,
    response.ok ? [packageEvent(request, 'package.published', facts, target.id, path.path)] : [],
  )
  await relayResponse(request, response)
}

/**
 * `PUT maven-metadata.xml`: refused when it names other coordinates than its path, else merged with what the target holds (a deploying client read the
 * filtered document and must not erase versions it was not shown). Its checksum files are
 * recomputed from what the target then stores, since the client hashed its own version.
 */
export async function putMavenMetadata(
  request: ProxyRequest,
  path: Extract<MavenPath, { kind: 'metadata' }>,
): Promise<void> {
  const target = requirePublishTarget(request)
  const body = await readBodyBytes(request, 16 * 1024 * 1024)
  if (!path.checksum) await checkMetadataCoordinates(path, body.toString('utf8'))
  if (path.snapshotVersion) return relayResponse(request, await put(request, target, path.path, body))
  const documentPath = path.checksum ? path.path.slice(0, -(path.checksum.length + 1)) : path.path
  const stored = await fetchMavenFile(request.scope, target, documentPath)
  if (path.checksum) {
    const digest = stored ? Buffer.from(checksumOf(stored.bytes, path.checksum)) : body
    return relayResponse(request, await put(request, target, path.path, digest))
  }
  const merged = mergeMetadata(body.toString('utf8'), stored ? stored.bytes.toString('utf8') : null)
  await relayResponse(request, await put(request, target, path.path, Buffer.from(merged)))
}
