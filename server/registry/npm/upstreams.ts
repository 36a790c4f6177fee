import type { Upstream } from '../../firewall/schema'
import { logger } from '../../app/logger'
import type { Packument } from './types'
import { IntegrityMismatch, verifyIntegrity } from '../upstream/integrity'
import { firstFound, type UpstreamScope } from '../upstream/selection'
import { parseFactObject } from '../fact-fetch'
import { readUpstreamBody, type UpstreamBody } from '../upstream/body-text'
import {
  artifactAuthorization,
  callUpstream,
  escapePackageName,
  upstreamAuthorization,
  upstreamUrl,
} from '../upstream/client'

/** Where a package was found. */
export interface Resolved {
  packument: Packument
  upstream: Upstream
}

const cacheScope = (scope: UpstreamScope, upstream: Upstream) => `${scope.ns}/${scope.firewall.id}/${upstream.id}`

async function fetchPackument(scope: UpstreamScope, upstream: Upstream, name: string): Promise<Packument | null> {
  if (upstream.cached) {
    const hit = await scope.cache.getPackument<Packument>(cacheScope(scope, upstream), name)
    if (hit) return hit.found ? hit.packument! : null
  }
  // The full document: `time` (minimumAge) is not in the abbreviated one.
  const response = await callUpstream(scope.transport, upstream, upstreamUrl(upstream, escapePackageName(name)), {
    headers: { accept: 'application/json' },
    authorization: upstreamAuthorization(upstream),
    timeoutMs: scope.timeoutMs,
  })
  let packument: Packument | null = null
  let body: UpstreamBody | undefined
  // Publish times and licenses come from here: an unreadable packument is a 502, not a 500.
  if (response.ok) {
    body = await readUpstreamBody(response)
    packument = (await parseFactObject(body.pieces, `the packument of ${name}`, upstream.id)) as unknown as Packument
  } else await response.arrayBuffer().catch(() => undefined)
  // 401/403 from an upstream mean "not available to us here": treated like 404, logged.
  if (!response.ok && response.status !== 404) {
    logger.warn('upstream refused packument', {
      upstream: upstream.id,
      firewall: scope.firewall.id,
      status: response.status,
    })
  }
  if (upstream.cached && (response.ok || response.status === 404)) {
    await scope.cache.setPackument(
      cacheScope(scope, upstream),
      name,
      { found: packument !== null, packument: packument ?? undefined },
      body?.chunks,
    )
  }
  return packument
}

/**
 * Finds `name` on the firewall's upstreams (see `lookupOrder`): an unreachable internal
 * upstream stops the search with `UpstreamUnavailable` (the guard cannot be checked), an
 * unreachable public one is skipped. Null when every upstream answered "not found".
 */
export async function resolvePackument(scope: UpstreamScope, name: string): Promise<Resolved | null> {
  const found = await firstFound(scope, (upstream) => fetchPackument(scope, upstream, name))
  return found && { packument: found.value, upstream: found.upstream }
}

/** Forgets cached packuments of `name` on every upstream of the firewall. */
export async function invalidatePackument(scope: UpstreamScope, name: string): Promise<void> {
  await Promise.all(scope.firewall.upstreams.map((u) => scope.cache.invalidate(cacheScope(scope, u), name)))
}

/**
 * The bytes of a tarball from the upstream that served its packument, with the artifact
 * credentials for its host. Integrity is checked before anything is served or cached; on a
 * `cached` upstream verified bytes are kept under their integrity.
 */
export async function fetchTarball(
  scope: UpstreamScope,
  upstream: Upstream,
  url: string,
  dist: { integrity?: string; shasum?: string },
): Promise<Buffer | null> {
  const cacheable = upstream.cached && Boolean(dist.integrity)
  if (cacheable) {
    const hit = await scope.cache.getTarball(dist.integrity!)
    if (hit) return hit
  }
  const response = await callUpstream(scope.transport, upstream, url, {
    authorization: artifactAuthorization(upstream, url),
    timeoutMs: scope.timeoutMs,
    kind: 'artifact',
  })
  if (!response.ok) {
    await response.arrayBuffer().catch(() => undefined)
    if (response.status !== 404)
      logger.warn('upstream refused tarball', {
        upstream: upstream.id,
        firewall: scope.firewall.id,
        status: response.status,
      })
    return null
  }
  const bytes = Buffer.from(await response.arrayBuffer())
  const verified = verifyIntegrity(bytes, dist.integrity, dist.shasum)
  if (verified === false) throw new IntegrityMismatch(`tarball from ${upstream.id} does not match its integrity`)
  if (cacheable) await scope.cache.setTarball(dist.integrity!, bytes)
  return bytes
}
