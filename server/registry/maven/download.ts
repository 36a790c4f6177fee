import type { PackageVersionFacts } from '../../firewall/rules/types'
import type { Upstream } from '../../firewall/schema'
import { decideArtifact, loadPolicy } from '../artifact-decision'
import { firstFound, type UpstreamScope } from '../upstream/selection'
import { recordDecision } from '../decision-recorder'
import { checksumOf, filterMetadata, TooManyVersions } from './metadata'
import { UPSTREAM_MAX_MEMBERS, UpstreamTooManyMembers } from '../upstream/member-limit'
import type { MavenPath } from './paths'
import type { ProxyRequest } from '../proxy-request'
import { blockedMessage, RegistryError, sendBytes } from '../responses'
import { callUpstream, upstreamAuthorization, upstreamUrl } from '../upstream/client'
import type { UpstreamBodyKind } from '../upstream/body-limit'

type FilePath = Extract<MavenPath, { kind: 'file' }>
type MetadataPath = Extract<MavenPath, { kind: 'metadata' }>

/** A file as one upstream serves it. */
interface UpstreamFile {
  bytes: Buffer
  contentType: string
  /** `Last-Modified`, ISO 8601: the closest Maven repositories come to a publish time. */
  modified?: string
}

/**
 * GETs one repository path from one upstream; null on 404 (and on 401/403: not ours to read).
 * `kind` picks the size bound: `artifact` for files (jars, poms), `metadata` for documents.
 */
export async function fetchMavenFile(
  scope: UpstreamScope,
  upstream: Upstream,
  path: string,
  kind: UpstreamBodyKind = 'metadata',
): Promise<UpstreamFile | null> {
  const response = await callUpstream(scope.transport, upstream, upstreamUrl(upstream, path), {
    authorization: upstreamAuthorization(upstream),
    timeoutMs: scope.timeoutMs,
    kind,
  })
  if (!response.ok) {
    await response.arrayBuffer().catch(() => undefined)
    return null
  }
  const modified = Date.parse(response.headers.get('last-modified') ?? '')
  return {
    bytes: Buffer.from(await response.arrayBuffer()),
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    ...(Number.isNaN(modified) ? {} : { modified: new Date(modified).toISOString() }),
  }
}

const notFound = (request: ProxyRequest, path: string) =>
  new RegistryError(404, `${path} was not found on any upstream of firewall ${request.firewall.id}`)

/**
 * `GET` of an artifact file (jar, pom, ...): the download decision, with the upstream's
 * Last-Modified as publish time. Checksum and signature companions follow the decision of
 * their file silently (refused when it is blocked, never logged twice).
 */
export async function serveMavenFile(request: ProxyRequest, target: FilePath): Promise<void> {
  const [found, policy] = await Promise.all([
    firstFound(request.scope, (upstream) => fetchMavenFile(request.scope, upstream, target.path, 'artifact')),
    loadPolicy(request),
  ])
  if (!found) throw notFound(request, target.path)
  const facts: PackageVersionFacts = {
    ecosystem: 'maven',
    packageName: target.name,
    version: target.version,
    ...(found.value.modified ? { published: found.value.modified } : {}),
  }
  // HEAD (existence checks) and companions are not downloads of their own: decided silently.
  if (target.companionOf || request.method === 'HEAD') {
    const decision = policy.decide(['download', 'versions'], facts)
    if (decision.outcome === 'blocked')
      throw new RegistryError(403, blockedMessage(decision, target.name, target.version, request))
  } else {
    const record = await decideArtifact(request, policy, 'download', facts, found.upstream.id)
    await recordDecision(request.services, record)
  }
  sendBytes(request, 200, found.value.bytes, found.value.contentType)
}

/**
 * `GET maven-metadata.xml` (and its checksums): the first upstream's artifact-level document
 * with versions hidden by `versions` rules removed (no events), `latest`/`release` moved to
 * what is left, and checksums computed from the bytes served. Version-level (SNAPSHOT)
 * documents pass unchanged.
 */
export async function serveMavenMetadata(request: ProxyRequest, target: MetadataPath): Promise<void> {
  const documentPath = target.checksum ? target.path.slice(0, -(target.checksum.length + 1)) : target.path
  const [found, policy] = await Promise.all([
    firstFound(request.scope, (upstream) => fetchMavenFile(request.scope, upstream, documentPath)),
    loadPolicy(request),
  ])
  if (!found) throw notFound(request, documentPath)
  const xml = target.snapshotVersion
    ? found.value.bytes.toString('utf8')
    : await filterMetadata(
        found.value.bytes.toString('utf8'),
        (version) => policy.visible({ ecosystem: 'maven', packageName: target.name, version }),
        UPSTREAM_MAX_MEMBERS,
      ).catch((error: unknown) => {
        if (error instanceof TooManyVersions) throw new UpstreamTooManyMembers(found.upstream.id, documentPath)
        throw error
      })
  if (target.checksum) return sendBytes(request, 200, Buffer.from(checksumOf(xml, target.checksum)), 'text/plain')
  sendBytes(request, 200, Buffer.from(xml), 'application/xml')
}
