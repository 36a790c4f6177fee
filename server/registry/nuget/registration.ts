import type { PackageVersionFacts } from '../../firewall/rules/types'
import { compareNuGet, normalizeNuGet, parseNuGet } from '../../firewall/rules/versions/nuget'
import type { Upstream } from '../../firewall/schema'
import { cachedDocument } from '../upstream/artifacts'
import type { UpstreamScope } from '../upstream/selection'
import { fetchNugetJson, upstreamResources } from './resources'

/** A registration leaf as the registration index inlines it. */
export interface RegistrationLeaf {
  '@id'?: string
  catalogEntry: {
    id: string
    version: string
    published?: string
    listed?: boolean
    licenseExpression?: string
    [key: string]: unknown
  }
  packageContent?: string
  registration?: string
  [key: string]: unknown
}

interface RegistrationPage {
  '@id'?: string
  items?: RegistrationLeaf[]
  [key: string]: unknown
}

/**
 * Every leaf of `id` on one upstream: the registration index, with pages that are not
 * inlined (more than 128 versions on nuget.org) fetched. Null when the upstream has no
 * registration resource or does not know the id.
 */
export async function registrationLeaves(
  scope: UpstreamScope,
  upstream: Upstream,
  id: string,
): Promise<RegistrationLeaf[] | null> {
  return cachedDocument(scope, upstream, `nuget:registration:${id}`, async () => {
    const base = (await upstreamResources(scope, upstream)).registrationsBaseUrl
    if (!base) return null
    const index = await fetchNugetJson<{ items?: RegistrationPage[] }>(scope, upstream, `${base}${id}/index.json`)
    if (!index) return null
    const pages = await Promise.all(
      (index.items ?? []).map(
        async (page) =>
          page.items ??
          (page['@id'] ? ((await fetchNugetJson<RegistrationPage>(scope, upstream, page['@id']))?.items ?? []) : []),
      ),
    )
    return pages.flat()
  })
}

const key = (version: string) => normalizeNuGet(version)?.toLowerCase() ?? version.toLowerCase()

// nuget.org marks an unlisted version with the published date 1900-01-01; that is not a
// publish time and must not make the version look old.
const realPublished = (published: string | undefined) =>
  published && !published.startsWith('1900-') ? published : undefined

/** What rules know about one version from its catalog entry. */
export function leafFacts(leaf: RegistrationLeaf): PackageVersionFacts {
  const entry = leaf.catalogEntry
  const published = realPublished(entry.published)
  return {
    ecosystem: 'nuget',
    packageName: entry.id,
    version: normalizeNuGet(entry.version) ?? entry.version,
    ...(published ? { published } : {}),
    ...(entry.licenseExpression ? { license: entry.licenseExpression } : {}),
  }
}

/** The leaves by normalised lower-case version, for looking up one version's facts. */
export function leavesByVersion(leaves: readonly RegistrationLeaf[]): Map<string, RegistrationLeaf> {
  return new Map(leaves.map((leaf) => [key(leaf.catalogEntry.version), leaf]))
}

/**
 * A registration index in one page holding the visible leaves, every URL on the proxy
 * (`@id`s, `packageContent`, `registration`); `lower`/`upper` by NuGet ordering.
 */
export function renderRegistration(baseUrl: string, id: string, leaves: RegistrationLeaf[]): unknown {
  const index = `${baseUrl}v3/registration/${id}/index.json`
  const sorted = [...leaves].sort((a, b) =>
    compareNuGet(parseNuGet(a.catalogEntry.version)!, parseNuGet(b.catalogEntry.version)!),
  )
  const items = sorted.map((leaf) => rewriteLeaf(baseUrl, id, leaf))
  if (items.length === 0) return { '@id': index, count: 0, items: [] }
  const lower = key(sorted[0].catalogEntry.version)
  const upper = key(sorted.at(-1)!.catalogEntry.version)
  return {
    '@id': index,
    count: 1,
    items: [{ '@id': `${index}#page/${lower}/${upper}`, count: items.length, lower, upper, parent: index, items }],
  }
}

/** One leaf with the proxy's URLs. */
export function rewriteLeaf(baseUrl: string, id: string, leaf: RegistrationLeaf): RegistrationLeaf {
  const version = key(leaf.catalogEntry.version)
  return {
    ...leaf,
    '@id': `${baseUrl}v3/registration/${id}/${version}.json`,
    packageContent: `${baseUrl}v3-flatcontainer/${id}/${version}/${id}.${version}.nupkg`,
    registration: `${baseUrl}v3/registration/${id}/index.json`,
  }
}
