import type { Upstream } from '../../firewall/schema'
import { cachedDocument } from '../upstream/artifacts'
import type { UpstreamScope } from '../upstream/selection'
import { RegistryError } from '../responses'
import { parseFactJson } from '../fact-fetch'
import { upstreamPieces } from '../upstream/body-text'
import { artifactAuthorization, callUpstream } from '../upstream/client'

/** The resources of an upstream's service index the proxy uses (URLs end with `/` where NuGet appends). */
interface NugetResources {
  packageBaseAddress?: string
  registrationsBaseUrl?: string
  packagePublish?: string
}

/**
 * GET of an upstream JSON document; null on 404 (and 401/403). A body that is not JSON is a
 * 502 naming the document (publish times and licenses come from these), never a 500. Every URL
 * but the endpoint comes from the upstream's answers (resources, registration pages): its
 * credentials go only to its own origin, or an artifact host's token to that host.
 */
export async function fetchNugetJson<T>(scope: UpstreamScope, upstream: Upstream, url: string): Promise<T | null> {
  const response = await callUpstream(scope.transport, upstream, url, {
    headers: { accept: 'application/json' },
    authorization: artifactAuthorization(upstream, url),
    timeoutMs: scope.timeoutMs,
  })
  if (!response.ok) {
    await response.arrayBuffer().catch(() => undefined)
    return null
  }
  return (await parseFactJson(
    await upstreamPieces(response),
    `the document ${new URL(url).pathname}`,
    upstream.id,
  )) as T
}

const withSlash = (url: string | undefined) => (url ? url.replace(/\/?$/, '/') : undefined)

/**
 * The upstream's service index (its endpoint is the `.../v3/index.json` URL, as in
 * nuget.config) reduced to the three resources the proxy fronts. Registration prefers the
 * SemVer 2 variant (`RegistrationsBaseUrl/3.6.0`) so SemVer 2 versions are not missing.
 */
export async function upstreamResources(scope: UpstreamScope, upstream: Upstream): Promise<NugetResources> {
  const index = await cachedDocument(scope, upstream, 'nuget:service-index', () =>
    fetchNugetJson<{ resources?: { '@id': string; '@type': string | string[] }[] }>(scope, upstream, upstream.endpoint),
  )
  if (!index) throw new RegistryError(502, `upstream ${upstream.id} has no NuGet service index at its endpoint`)
  const find = (...types: string[]) => {
    for (const type of types) {
      const hit = index.resources?.find((r) => [r['@type']].flat().includes(type))
      if (hit) return hit['@id']
    }
    return undefined
  }
  return {
    packageBaseAddress: withSlash(find('PackageBaseAddress/3.0.0')),
    registrationsBaseUrl: withSlash(
      find(
        'RegistrationsBaseUrl/3.6.0',
        'RegistrationsBaseUrl/Versioned',
        'RegistrationsBaseUrl/3.4.0',
        'RegistrationsBaseUrl/3.0.0-rc',
        'RegistrationsBaseUrl',
      ),
    ),
    packagePublish: find('PackagePublish/2.0.0')?.replace(/\/+$/, ''),
  }
}

/**
 * The proxy's own service index: the same resource kinds, all pointing at the proxy, so a
 * client configured with `{base}v3/index.json` never talks to an upstream directly.
 */
export function proxyServiceIndex(baseUrl: string): unknown {
  const registration = `${baseUrl}v3/registration/`
  const registrationTypes = [
    'RegistrationsBaseUrl',
    'RegistrationsBaseUrl/3.0.0-rc',
    'RegistrationsBaseUrl/3.0.0-beta',
    'RegistrationsBaseUrl/3.4.0',
    'RegistrationsBaseUrl/3.6.0',
    'RegistrationsBaseUrl/Versioned',
  ]
  return {
    version: '3.0.0',
    resources: [
      {
        '@id': `${baseUrl}v3-flatcontainer/`,
        '@type': 'PackageBaseAddress/3.0.0',
        comment: 'package content through the firewall',
      },
      ...registrationTypes.map((type) => ({
        '@id': registration,
        '@type': type,
        comment: 'package metadata through the firewall',
      })),
      {
        '@id': `${baseUrl}api/v2/package`,
        '@type': 'PackagePublish/2.0.0',
        comment: 'push and unlist through the firewall',
      },
    ],
  }
}
