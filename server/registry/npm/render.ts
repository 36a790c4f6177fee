import { ruleNeedsAdvisories } from '../../advisories/needs-advisories'
import { eachOwn, own, setOwn } from '../../common/own'
import { evaluate, type Decision } from '../../firewall/rules/evaluate'
import {
  factsFromManifest,
  filterPackument,
  rewriteTarballUrls,
  toAbbreviated,
  type Manifest,
  type Packument,
} from './packument'
import { evaluationContext, firewallChain, chainAndContext } from '../firewall-chain'
import { resolvePackument, type Resolved } from './upstreams'
import type { ProxyRequest } from '../proxy-request'
import {
  RegistryError,
  prepareJsonDocument,
  sendJson,
  sendJsonDocument,
  sendPreparedDocument,
  type PreparedDocument,
} from '../responses'
import { TimeSlice } from '../../common/time-slice'
import { refusesBlockedPackument, refuseWhenEveryVersionBlocked } from './whole-package-block'
import { blockedVersions, pointAtNotices, type BlockedVersions } from './notice-packument'
import { noticeMinter } from './tarball-notice'

const ABBREVIATED = 'application/vnd.npm.install-v1+json'

/** Whether a record has an own key (without listing them all). */
function hasOwnKeys(record: object): boolean {
  for (const key in record) if (Object.hasOwn(record, key)) return true
  return false
}

/** Upstream bookkeeping that must not leak to clients (upstream URLs, internal revisions). */
const PRIVATE_FIELDS = ['_attachments', '_distfiles', '_uplinks']

/**
 * npm's own `policyRestrictions` shape (npm-pick-manifest): `versions` maps a hidden version
 * to its manifest and `message` is printed when a pinned install asks for one ("Could not
 * download x@2.0.0 due to policy violations: ..."). Each entry also keeps `rule` and `reason`.
 */
async function npmRestrictions(
  filtered: Packument,
  original: Packument,
  baseUrl: string,
  slice: TimeSlice,
): Promise<Packument> {
  const restricted = filtered.policyRestrictions?.versions
  if (!restricted || !hasOwnKeys(restricted)) return filtered
  const hidden: Record<string, Manifest> = {}
  await eachOwn(
    restricted,
    (version) => {
      const manifest = own(original.versions, version)
      if (manifest) setOwn(hidden, version, manifest)
    },
    slice,
  )
  const rewritten = (await rewriteTarballUrls({ name: original.name, versions: hidden }, baseUrl, slice)).packument
    .versions
  const versions: Record<string, unknown> = {}
  const lines: string[] = []
  await eachOwn(
    restricted,
    (version, why) => {
      setOwn(versions, version, { ...own(rewritten, version), ...why })
      lines.push(`${original.name}@${version}: ${why.reason}${why.rule ? ` (rule ${why.rule})` : ''}`)
    },
    slice,
  )
  const message = lines.join('\n')
  return { ...filtered, policyRestrictions: { message, versions } as unknown as Packument['policyRestrictions'] }
}

type Chain = Awaited<ReturnType<typeof firewallChain>>
type Context = Awaited<ReturnType<typeof evaluationContext>>

/**
 * The packument a client sees: `versions`-phase rules applied (no events: metadata filtering
 * is not a decision), tarball URLs pointing at the proxy, `dist.integrity` and `time` kept.
 */
async function renderPackument(request: ProxyRequest, resolved: Resolved): Promise<Packument> {
  const [chain, ctx] = await chainAndContext(request)
  return renderWith(request, resolved.packument, chain, ctx)
}

/**
 * One cooperative pass (the versions of a packument are the upstream's to choose): every step
 * shares one time slice, so the pass holds the event loop a slice at a time.
 */
async function renderWith(request: ProxyRequest, packument: Packument, chain: Chain, ctx: Context): Promise<Packument> {
  const slice = new TimeSlice()
  const hasVersionRules = chain.some((layer) => layer.firewall.rules.some((rule) => rule.executionPhase === 'versions'))
  const filtered = hasVersionRules
    ? await filterPackument(
        packument,
        (version, manifest) =>
          evaluate(chain, ['versions'], factsFromManifest(packument.name, version, manifest, packument), ctx),
        slice,
      )
    : packument
  const visible: Packument = { ...(await rewriteTarballUrls(filtered, request.baseUrl, slice)).packument }
  for (const field of PRIVATE_FIELDS) delete visible[field]
  return npmRestrictions(visible, packument, request.baseUrl, slice)
}

/**
 * Rendered documents per upstream packument object (the proxy cache hands out the same object
 * while it is fresh) and per everything the rendering depends on: the firewall chain's
 * versions, the license sets, the advisory data (when a versions rule reads it), the origin, the
 * form, and time in 10 s steps (`minimumAge` and exception expiry move with the clock; downloads
 * are always decided exactly). Warm installs and ETag revalidations then cost one lookup.
 */
const renderedDocuments = new WeakMap<Packument, Map<string, PreparedDocument>>()
const advisoryIds = new WeakMap<object, number>()
let nextAdvisoryId = 0
const RENDER_STEP_MS = 10_000

/** Per upstream packument object and render key (below): the versions pnpm 12 is told are blocked. */
const blockedVersionSets = new WeakMap<Packument, Map<string, BlockedVersions>>()

function renderKey(request: ProxyRequest, chain: Chain, ctx: Context, form: string, phases: readonly string[]): string {
  // Advisory data counts only where a rule of these phases reads it: a feed refresh leaves the others rendered.
  const readsAdvisories = chain.some((layer) =>
    layer.firewall.rules.some((rule) => phases.includes(rule.executionPhase) && ruleNeedsAdvisories(rule)),
  )
  let advisoryId = readsAdvisories ? advisoryIds.get(ctx.advisories) : -1
  if (advisoryId === undefined) advisoryIds.set(ctx.advisories, (advisoryId = nextAdvisoryId++))
  const layers = chain.map((layer) => `${layer.firewall.id}@${layer.firewall.version}`).join(',')
  const licenses = JSON.stringify([...ctx.licenseSets])
  return `${layers}|${licenses}|${advisoryId}|${request.baseUrl}|${form}|${Math.floor(ctx.now / RENDER_STEP_MS)}`
}

/** At most this many documents or blocked-version sets are kept per upstream packument. */
const KEPT_PER_PACKUMENT = 50

function cached<V>(cache: WeakMap<Packument, Map<string, V>>, packument: Packument, key: string): V | undefined {
  return cache.get(packument)?.get(key)
}

function keep<V>(cache: WeakMap<Packument, Map<string, V>>, packument: Packument, key: string, value: V): void {
  let values = cache.get(packument)
  if (!values) cache.set(packument, (values = new Map()))
  if (values.size > KEPT_PER_PACKUMENT) values.clear()
  values.set(key, value)
}

/**
 * The versions a tarball request would refuse (`download` and `versions` rules), decided once per
 * render key: pnpm 12's whole-package refusal and its notice URLs both read them, so a repeat
 * request costs one lookup instead of a decision per version (up to 50,000). Like the rendered
 * documents they may be up to 10 s behind the clock (`minimumAge`, exception expiry); the tarball
 * request itself is always decided exactly.
 */
async function blockedVersionsOf(
  request: ProxyRequest,
  packument: Packument,
  chain: Chain,
  ctx: Context,
): Promise<BlockedVersions> {
  const key = renderKey(request, chain, ctx, 'blocked', ['download', 'versions'])
  let versions = cached(blockedVersionSets, packument, key)
  if (!versions) {
    versions = await blockedVersions(packument, (version, manifest) =>
      evaluate(chain, ['download', 'versions'], factsFromManifest(packument.name, version, manifest, packument), ctx),
    )
    keep(blockedVersionSets, packument, key, versions)
  }
  return versions
}

async function resolveOr404(request: ProxyRequest, name: string): Promise<Resolved> {
  const resolved = await resolvePackument(request.scope, name)
  if (!resolved)
    throw new RegistryError(404, `package ${name} was not found on any upstream of firewall ${request.firewall.id}`)
  return resolved
}

/** `GET /{name}`: full, or abbreviated when the client asks for `application/vnd.npm.install-v1+json`. */
export async function servePackument(request: ProxyRequest, name: string): Promise<void> {
  const resolved = await resolveOr404(request, name)
  const [chain, ctx] = await chainAndContext(request)
  const abbreviated = String(request.headers.accept ?? '').includes(ABBREVIATED)
  if (refusesBlockedPackument(request.headers)) {
    const blocked = await blockedVersionsOf(request, resolved.packument, chain, ctx)
    await refuseWhenEveryVersionBlocked(request, resolved, blocked)
    if (blocked.blocked.size > 0)
      return servePointingAtNotices(request, resolved.packument, blocked.blocked, chain, ctx, abbreviated)
  }
  const key = renderKey(request, chain, ctx, abbreviated ? 'abbreviated' : 'full', ['versions'])
  let document = cached(renderedDocuments, resolved.packument, key)
  if (!document) {
    const packument = await renderWith(request, resolved.packument, chain, ctx)
    document = await prepareJsonDocument(abbreviated ? await toAbbreviated(packument) : packument)
    keep(renderedDocuments, resolved.packument, key, document)
  }
  return sendPreparedDocument(request, document, abbreviated ? ABBREVIATED : 'application/json', { vary: 'accept' })
}

/**
 * pnpm 12 with some versions blocked: those versions' tarball URLs point at signed notices that
 * name a fresh request id and the rule (tarball-notice.ts). Such an answer is new each time, so it
 * is neither cached here nor revalidatable (no ETag, `no-store`): a later install gets new ids.
 */
async function servePointingAtNotices(
  request: ProxyRequest,
  packument: Packument,
  blocked: ReadonlyMap<string, Decision>,
  chain: Chain,
  ctx: Context,
  abbreviated: boolean,
): Promise<void> {
  const mint = await noticeMinter(request)
  const rendered = await renderWith(request, packument, chain, ctx)
  const pointed = await pointAtNotices(rendered, blocked, (version, ruleId) => mint(packument.name, version, ruleId))
  request.response.setHeader('cache-control', 'no-store')
  request.response.setHeader('vary', 'accept')
  const type = abbreviated ? ABBREVIATED : 'application/json'
  await sendJsonDocument(request, 200, abbreviated ? await toAbbreviated(pointed) : pointed, type)
}

/** `GET /{name}/{version|tag}`: one manifest of the filtered packument. */
export async function serveManifest(request: ProxyRequest, name: string, spec: string): Promise<void> {
  const packument = await renderPackument(request, await resolveOr404(request, name))
  // Own keys only: `constructor` or `toString` is a tag or version a client may ask for.
  const version = own(packument['dist-tags'], spec) ?? spec
  const manifest = own(packument.versions, version)
  if (manifest) return sendJson(request, 200, manifest)
  const restriction = own(packument.policyRestrictions?.versions, version)
  if (restriction)
    throw new RegistryError(
      403,
      `${name}@${version} is hidden by firewall ${request.firewall.id}: ${restriction.reason}`,
    )
  throw new RegistryError(404, `version ${spec} of ${name} was not found`)
}

/** `GET /-/package/{name}/dist-tags`: the tags of the packument as the firewall serves it. */
export async function serveDistTags(request: ProxyRequest, name: string): Promise<void> {
  const packument = await renderPackument(request, await resolveOr404(request, name))
  return sendJson(request, 200, packument['dist-tags'] ?? {})
}
