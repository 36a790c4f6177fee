import { parseTarballPath } from './packument'
import { serveBulkAdvisories } from './advisories'
import { serveDistTags, serveManifest, servePackument } from './render'
import { parsePackagePath } from './paths'
import { deletePackage, putPackage, serveWritablePackument, writeDistTag } from './publish'
import { serveTarball } from './tarball'
import { isBlockNotice, serveBlockNotice } from './block-notice'
import { isTarballNotice, verifyTarballNotice } from './tarball-notice'
import type { ProxyRequest } from '../proxy-request'
import { RegistryError, sendJson } from '../responses'
import { callUpstream, upstreamAuthorization, upstreamUrl, UpstreamUnavailable } from '../upstream/client'

/** `GET /-/npm/v1/keys`: the first upstream's signing keys (tarballs pass unchanged, so they verify). */
async function serveKeys(request: ProxyRequest): Promise<void> {
  for (const upstream of request.firewall.upstreams) {
    try {
      const response = await callUpstream(request.scope.transport, upstream, upstreamUrl(upstream, '-/npm/v1/keys'), {
        headers: { accept: 'application/json' },
        authorization: upstreamAuthorization(upstream),
        timeoutMs: request.scope.timeoutMs,
      })
      if (response.ok) return sendJson(request, 200, await response.json())
      await response.arrayBuffer().catch(() => undefined)
    } catch (error) {
      if (!(error instanceof UpstreamUnavailable)) throw error
    }
  }
  sendJson(request, 200, { keys: [] })
}

const methodNotAllowed = (request: ProxyRequest) =>
  new RegistryError(405, `${request.method} ${request.path} is not supported`)

/** `/-/...` endpoints of the npm registry API. */
async function handleDash(request: ProxyRequest): Promise<void> {
  const { path } = request
  const method = request.method
  if (path === '/-/ping') return sendJson(request, 200, {})
  if (path === '/-/whoami') return sendJson(request, 200, { username: request.principal.id })
  if (path === '/-/npm/v1/keys' && method === 'GET') return serveKeys(request)
  if (isTarballNotice(path)) {
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(request)
    // Decided again from scratch: the path names only the tarball and the id a block is logged under.
    const { tarball, requestId } = await verifyTarballNotice(request)
    return serveTarball(request, tarball, requestId)
  }
  if (isBlockNotice(path)) return serveBlockNotice(request)
  if (path === '/-/npm/v1/security/advisories/bulk') {
    if (method !== 'POST') throw methodNotAllowed(request)
    return serveBulkAdvisories(request)
  }
  const distTags = /^\/-\/package\/(.+?)\/dist-tags(?:\/([^/]+))?\/?$/.exec(path)
  const target = distTags ? parsePackagePath(`/${distTags[1]}`) : null
  if (distTags && target && target.rest.length === 0) {
    if (method === 'GET' && !distTags[2]) return serveDistTags(request, target.name)
    if (distTags[2] && ['PUT', 'POST', 'DELETE'].includes(method))
      return writeDistTag(request, target.name, decodeURIComponent(distTags[2]))
    throw methodNotAllowed(request)
  }
  throw new RegistryError(404, `${path} is not served by this registry`)
}

/**
 * Routes one npm registry request: `/-/` endpoints, tarballs (download decision), packuments
 * and manifests (version filtering), and writes (publish = upload decision, metadata writes,
 * unpublish) forwarded to the publish target.
 */
export async function handleNpm(request: ProxyRequest): Promise<void> {
  const method = request.method
  if (request.path.startsWith('/-/')) return handleDash(request)
  const tarball = parseTarballPath(request.path)
  if (tarball) {
    if (method === 'GET' || method === 'HEAD') return serveTarball(request, tarball)
    if (method === 'DELETE') {
      const target = parsePackagePath(request.path)
      if (target) return deletePackage(request, target.name, target.rest)
    }
    throw methodNotAllowed(request)
  }
  const target = parsePackagePath(request.path)
  if (!target) throw new RegistryError(404, `${request.path} is not a package path`)
  const { name, rest } = target
  if (method === 'GET' || method === 'HEAD') {
    if (rest.length === 0)
      return request.query.get('write') === 'true'
        ? serveWritablePackument(request, name)
        : servePackument(request, name)
    if (rest.length === 1) return serveManifest(request, name, rest[0])
    throw new RegistryError(404, `${request.path} is not served by this registry`)
  }
  if (method === 'PUT') return putPackage(request, name, rest)
  if (method === 'DELETE' && rest[0] === '-rev') return deletePackage(request, name, rest)
  throw methodNotAllowed(request)
}
