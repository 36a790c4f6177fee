import { evaluate } from '../firewall/rules/evaluate'
import { factsFromManifest, filterPackument, rewriteTarballUrls, toAbbreviated, type Manifest, type Packument } from './npm/packument'
import { evaluationContext, firewallChain } from './firewall-chain'
import { resolvePackument, type Resolved } from './npm-upstreams'
import type { ProxyRequest } from './proxy-request'
import { RegistryError, sendJson, sendJsonDocument } from './responses'

const ABBREVIATED = 'application/vnd.npm.install-v1+json'

/** Upstream bookkeeping that must not leak to clients (upstream URLs, internal revisions). */
const PRIVATE_FIELDS = ['_attachments', '_distfiles', '_uplinks']

/**
 * npm's own `policyRestrictions` shape (npm-pick-manifest): `versions` maps a hidden version
 * to its manifest and `message` is printed when a pinned install asks for one ("Could not
 * download x@2.0.0 due to policy violations: ..."). Each entry also keeps `rule` and `reason`.
 */
function npmRestrictions(filtered: Packument, original: Packument, baseUrl: string): Packument {
  const restricted = filtered.policyRestrictions?.versions
  if (!restricted || Object.keys(restricted).length === 0) return filtered
  const hidden: Record<string, Manifest> = {}
  for (const version of Object.keys(restricted)) {
    const manifest = original.versions?.[version]
    if (manifest) hidden[version] = manifest
  }
  const rewritten = rewriteTarballUrls({ name: original.name, versions: hidden }, baseUrl).packument.versions ?? {}
  const versions = Object.fromEntries(Object.entries(restricted).map(([version, why]) => [version, { ...rewritten[version], ...why }]))
  const message = Object.entries(restricted)
    .map(([version, why]) => `${original.name}@${version}: ${why.reason}${why.rule ? ` (rule ${why.rule})` : ''}`)
    .join('\n')
  return { ...filtered, policyRestrictions: { message, versions } as unknown as Packument['policyRestrictions'] }
}

/**
 * The packument a client sees: `versions`-phase rules applied (no events: metadata filtering
 * is not a decision), tarball URLs pointing at the proxy, `dist.integrity` and `time` kept.
 */
export async function renderPackument(request: ProxyRequest, resolved: Resolved): Promise<Packument> {
  const { packument } = resolved
  const [chain, ctx] = await Promise.all([
    firewallChain(request.services, request.ns, request.firewall),
    evaluationContext(request.services, request.ns, request.advisories),
  ])
  const hasVersionRules = chain.some((layer) => layer.firewall.rules.some((rule) => rule.executionPhase === 'versions'))
  const filtered = hasVersionRules
    ? filterPackument(packument, (version, manifest) => evaluate(chain, ['versions'], factsFromManifest(packument.name, version, manifest, packument), ctx))
    : packument
  const visible: Packument = { ...rewriteTarballUrls(filtered, request.baseUrl).packument }
  for (const field of PRIVATE_FIELDS) delete visible[field]
  return npmRestrictions(visible, packument, request.baseUrl)
}

async function resolveOr404(request: ProxyRequest, name: string): Promise<Resolved> {
  const resolved = await resolvePackument(request.scope, name)
  if (!resolved) throw new RegistryError(404, `package ${name} was not found on any upstream of firewall ${request.firewall.id}`)
  return resolved
}

/** `GET /{name}`: full, or abbreviated when the client asks for `application/vnd.npm.install-v1+json`. */
export async function servePackument(request: ProxyRequest, name: string): Promise<void> {
  const packument = await renderPackument(request, await resolveOr404(request, name))
  const accept = String(request.event.node.req.headers.accept ?? '')
  if (accept.includes(ABBREVIATED)) return sendJsonDocument(request.event, toAbbreviated(packument), ABBREVIATED, { vary: 'accept' })
  return sendJsonDocument(request.event, packument, 'application/json', { vary: 'accept' })
}

/** `GET /{name}/{version|tag}`: one manifest of the filtered packument. */
export async function serveManifest(request: ProxyRequest, name: string, spec: string): Promise<void> {
  const packument = await renderPackument(request, await resolveOr404(request, name))
  const version = packument['dist-tags']?.[spec] ?? spec
  const manifest = packument.versions?.[version]
  if (manifest) return sendJson(request.event, 200, manifest)
  const restriction = packument.policyRestrictions?.versions[version]
  if (restriction) throw new RegistryError(403, `${name}@${version} is hidden by firewall ${request.firewall.id}: ${restriction.reason}`)
  throw new RegistryError(404, `version ${spec} of ${name} was not found`)
}

/** `GET /-/package/{name}/dist-tags`: the tags of the packument as the firewall serves it. */
export async function serveDistTags(request: ProxyRequest, name: string): Promise<void> {
  const packument = await renderPackument(request, await resolveOr404(request, name))
  return sendJson(request.event, 200, packument['dist-tags'] ?? {})
}
