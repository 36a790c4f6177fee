import { own } from '../../common/own'
import { evaluate } from '../../firewall/rules/evaluate'
import { factsFromManifest, type TarballPath } from './packument'
import { recordDecision, type DecisionRecord } from '../decision-recorder'
import { chainAndContext } from '../firewall-chain'
import { fetchTarball, resolvePackument } from './upstreams'
import type { ProxyRequest } from '../proxy-request'
import { blockedMessage, RegistryError, sendBytes } from '../responses'
import { printsOnlyTheUrl, redirectToBlockNotice } from './block-notice'

/**
 * `GET /{name}/-/{file}.tgz`: the download decision. Rules of the `download` and `versions`
 * phases are evaluated (a version hidden from the packument is also refused as a file); the
 * decision is written to the firewall log (and the event log when it emits) before a block
 * is answered, and alongside the upstream fetch when it is allowed. `blockId`: the request id a
 * block is logged and named under instead of this request's (a signed pnpm notice's,
 * tarball-notice.ts); an allowed download is logged under this request's id as always.
 */
export async function serveTarball(request: ProxyRequest, tarball: TarballPath, blockId?: string): Promise<void> {
  const { name, version } = tarball
  const resolved = await resolvePackument(request.scope, name)
  if (!resolved)
    throw new RegistryError(404, `package ${name} was not found on any upstream of firewall ${request.firewall.id}`)
  const manifest = own(resolved.packument.versions, version)
  const upstreamUrl = manifest?.dist?.tarball
  if (!manifest || typeof upstreamUrl !== 'string') throw new RegistryError(404, `${name}@${version} was not found`)

  const [chain, ctx] = await chainAndContext(request)
  const facts = factsFromManifest(name, version, manifest, resolved.packument)
  const decision = evaluate(chain, ['download', 'versions'], facts, ctx)
  const record: DecisionRecord = {
    ns: request.ns,
    firewall: request.firewall,
    phase: 'download',
    decision,
    facts,
    upstream: resolved.upstream.id,
    principal: request.principal,
    meta: request.meta,
  }
  if (decision.outcome === 'blocked') {
    const meta = blockId ? { ...request.meta, requestId: blockId } : request.meta
    await recordDecision(request.services, { ...record, meta })
    if (!blockId && printsOnlyTheUrl(request.headers))
      return redirectToBlockNotice(request, name, version, decision.rule?.id ?? 'unknown')
    throw new RegistryError(403, blockedMessage(decision, name, version, { ...request, meta }))
  }
  const recorded = recordDecision(request.services, record)
  const bytes = await fetchTarball(request.scope, resolved.upstream, upstreamUrl, manifest.dist ?? {}).finally(() =>
    recorded.catch(() => undefined),
  )
  await recorded
  if (!bytes) throw new RegistryError(404, `${name}@${version}: the upstream has no such file`)
  sendBytes(request, 200, bytes, 'application/octet-stream')
}
