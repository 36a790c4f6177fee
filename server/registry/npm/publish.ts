import type { Upstream } from '../../firewall/schema'
import { evaluate, type Decision } from '../../firewall/rules/evaluate'
import type { PackageVersionFacts } from '../../firewall/rules/types'
import { factsFromManifest, type Manifest } from './packument'
import { publishedEvent, recordDecision, type DecisionRecord } from '../decision-recorder'
import { chainAndContext } from '../firewall-chain'
import { invalidatePackument } from './upstreams'
import type { ProxyRequest } from '../proxy-request'
import { readBodyBytes, readJson } from '../request-body'
import { blockedMessage, RegistryError } from '../responses'
import { callUpstream, escapePackageName, upstreamAuthorization, upstreamUrl } from '../upstream/client'
import { requirePublishTarget } from '../upstream/artifacts'
import { checkPublishIdentity } from './publish-identity'

/** Sends a write to the publish target and relays its answer (status and body) to the client. */
async function forward(
  request: ProxyRequest,
  target: Upstream,
  method: string,
  path: string,
  body?: Buffer,
): Promise<Response> {
  const response = await callUpstream(request.scope.transport, target, upstreamUrl(target, path), {
    method,
    body,
    headers: body ? { 'content-type': 'application/json', accept: 'application/json' } : { accept: 'application/json' },
    authorization: upstreamAuthorization(target),
    timeoutMs: request.scope.timeoutMs,
  })
  return response
}

async function relay(request: ProxyRequest, response: Response): Promise<void> {
  const bytes = Buffer.from(await response.arrayBuffer())
  const res = request.response
  res.statusCode = response.status
  res.setHeader('content-type', response.headers.get('content-type') ?? 'application/json')
  res.setHeader('content-length', bytes.length)
  res.end(bytes)
}

/**
 * `PUT /{name}` with `_attachments`: the body must name only the URL's package and its
 * versions (400 otherwise, nothing forwarded), then the upload decision for each version. A
 * block answers 403 (npm prints its `error`); otherwise the body as parsed and judged is
 * re-serialised to the publish target (a repeated JSON key cannot mean one thing here and
 * another there), and a 2xx there emits `package.published` with the decision's log entry,
 * atomically.
 */
async function publish(request: ProxyRequest, name: string, body: Record<string, unknown>): Promise<void> {
  const target = requirePublishTarget(request)
  checkPublishIdentity(name, body)
  const versions = Object.entries(body.versions as Record<string, Manifest>)
  if (versions.length === 0) throw new RegistryError(400, 'a publish body needs at least one version')
  const [chain, ctx] = await chainAndContext(request)
  const now = new Date(ctx.now).toISOString()
  const records: DecisionRecord[] = versions.map(([version, manifest]) => {
    const facts: PackageVersionFacts = factsFromManifest(name, version, manifest, { time: { [version]: now } })
    const decision: Decision = evaluate(chain, ['upload'], facts, ctx)
    return {
      ns: request.ns,
      firewall: request.firewall,
      phase: 'upload',
      decision,
      facts,
      upstream: target.id,
      principal: request.principal,
      meta: request.meta,
    }
  })
  const blocked = records.find((r) => r.decision.outcome === 'blocked')
  if (blocked) {
    await recordDecision(request.services, blocked)
    throw new RegistryError(403, blockedMessage(blocked.decision, name, blocked.facts.version, request))
  }
  const response = await forward(request, target, 'PUT', escapePackageName(name), Buffer.from(JSON.stringify(body)))
  const published = response.ok
  for (const record of records) {
    await recordDecision(
      request.services,
      record,
      published ? [publishedEvent(request.services, record, target.id)] : [],
    )
  }
  if (published) await invalidatePackument(request.scope, name)
  await relay(request, response)
}

/**
 * `PUT /{name}`: a publish when the body carries `_attachments`, else a metadata write
 * (`npm deprecate`, unpublish of a version) forwarded as it is.
 */
export async function putPackage(request: ProxyRequest, name: string, rest: string[]): Promise<void> {
  const { raw, json } = await readJson(request, request.maxBodyBytes)
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new RegistryError(400, 'expected a package document')
  const body = json as Record<string, unknown>
  const attachments = body._attachments as Record<string, unknown> | undefined
  const uploads = Boolean(attachments && typeof attachments === 'object' && Object.keys(attachments).length > 0)
  // Only `PUT /{name}` is judged as an upload: attachments anywhere else would bypass the decision.
  if (uploads && rest.length > 0)
    throw new RegistryError(400, `a publish (a body with _attachments) goes to PUT /${name}`)
  if (uploads) return publish(request, name, body)
  const target = requirePublishTarget(request)
  const path = [escapePackageName(name), ...rest.map(encodeURIComponent)].join('/')
  const response = await forward(request, target, 'PUT', path, raw)
  if (response.ok) await invalidatePackument(request.scope, name)
  await relay(request, response)
}

/** `DELETE /{name}/-rev/{rev}` and tarball deletes (unpublish): forwarded to the publish target. */
export async function deletePackage(request: ProxyRequest, name: string, rest: string[]): Promise<void> {
  const target = requirePublishTarget(request)
  const response = await forward(
    request,
    target,
    'DELETE',
    [escapePackageName(name), ...rest.map(encodeURIComponent)].join('/'),
  )
  if (response.ok) await invalidatePackument(request.scope, name)
  await relay(request, response)
}

/** `GET /{name}?write=true` (npm deprecate, owner): the publish target's unfiltered document. */
export async function serveWritablePackument(request: ProxyRequest, name: string): Promise<void> {
  await relay(
    request,
    await forward(request, requirePublishTarget(request), 'GET', `${escapePackageName(name)}?write=true`),
  )
}

/** `PUT|POST|DELETE /-/package/{name}/dist-tags/{tag}`: forwarded to the publish target. */
export async function writeDistTag(request: ProxyRequest, name: string, tag: string): Promise<void> {
  const method = request.method
  const body = method === 'DELETE' ? undefined : await readBodyBytes(request, 64 * 1024)
  const path = `-/package/${escapePackageName(name)}/dist-tags/${encodeURIComponent(tag)}`
  const response = await forward(request, requirePublishTarget(request), method, path, body)
  if (response.ok) await invalidatePackument(request.scope, name)
  await relay(request, response)
}
