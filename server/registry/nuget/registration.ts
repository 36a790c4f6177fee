import type { PackageVersionFacts } from '../../firewall/rules/types'
import { compareNuGet, normalizeNuGet, parseNuGet } from '../../firewall/rules/versions/nuget'
import type { Upstream } from '../../firewall/schema'
import { sortCooperatively } from '../../common/cooperative-sort'
import { TimeSlice } from '../../common/time-slice'
import { cachedDocument } from '../upstream/artifacts'
import type { UpstreamScope } from '../upstream/selection'
import { fetchNugetJson, upstreamResources } from './resources'
import { RegistryError } from '../responses'

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
 * Pages a registration index may list. nuget.org puts 64 versions on a page, so this is 64,000
 * versions; an index listing more is refused rather than fetched (an upstream's answer is
 * outside input: a broken or hostile one could list millions).
 */
export const REGISTRATION_PAGE_LIMIT = 1_000
/** Pages of one registration fetched at a time (all at once, an index of 1,000 pages was 1,000 requests). */
export const REGISTRATION_PAGE_FETCHES = 4

/**
 * Every leaf of `id` on one upstream: the registration index, with pages that are not
 * inlined (more than 128 versions on nuget.org) fetched, `REGISTRATION_PAGE_FETCHES` at a time.
 * Null when the upstream has no registration resource or does not know the id; 502 when the
 * index lists more than `REGISTRATION_PAGE_LIMIT` pages.
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
    const listed = Array.isArray(index.items) ? index.items : []
    if (listed.length > REGISTRATION_PAGE_LIMIT)
      throw new RegistryError(
        502,
        `upstream ${upstream.id} lists ${listed.length} registration pages for ${id}, more than the ${REGISTRATION_PAGE_LIMIT} this proxy reads`,
      )
    /** The leaves of one listed page: inlined, or read from the URL it names. */
    const leavesOf = async (page: unknown): Promise<RegistrationLeaf[]> => {
      if (typeof page !== 'object' || page === null) return []
      const { items, '@id': url } = page as RegistrationPage
      const found =
        items ??
        (typeof url === 'string' && URL.canParse(url)
          ? (await fetchNugetJson<RegistrationPage>(scope, upstream, url))?.items
          : [])
      return Array.isArray(found) ? found.filter(isLeaf) : []
    }
    const pages: RegistrationLeaf[][] = []
    let next = 0
    const fetchPages = async () => {
      while (next < listed.length) {
        const at = next++
        try {
          pages[at] = await leavesOf(listed[at])
        } catch (error) {
          // A failed page fails the whole list: the other fetchers stop taking pages.
          next = listed.length
          throw error
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(REGISTRATION_PAGE_FETCHES, listed.length) }, fetchPages))
    return pages.flat()
  })
}

/**
 * An item an upstream listed as a leaf that is one: an object whose catalog entry names an id and
 * a version. Anything else is left out where it is read (it failed the whole index with a 500).
 */
function isLeaf(item: unknown): item is RegistrationLeaf {
  if (typeof item !== 'object' || item === null) return false
  const entry = (item as { catalogEntry?: unknown }).catalogEntry
  if (typeof entry !== 'object' || entry === null) return false
  const { id, version } = entry as { id?: unknown; version?: unknown }
  return typeof id === 'string' && typeof version === 'string'
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

/** Leaves between two turns of the loop (a hostile upstream's registration lists as many as it likes). */
const LEAVES_PER_STEP = 256

/**
 * A registration index in one page holding the visible leaves, every URL on the proxy
 * (`@id`s, `packageContent`, `registration`); `lower`/`upper` by NuGet ordering. The leaves are
 * the upstream's, as many as it lists: each version is parsed once (the sort's comparisons parsed
 * both of theirs, ~40 times per version for 100,000), and the sort and the rewriting take turns
 * with the rest of the process (CONTRACT.md 8).
 */
export async function renderRegistration(
  baseUrl: string,
  id: string,
  leaves: RegistrationLeaf[],
  slice = new TimeSlice(),
): Promise<unknown> {
  const index = `${baseUrl}v3/registration/${id}/index.json`
  const keyed: { leaf: RegistrationLeaf; version: NonNullable<ReturnType<typeof parseNuGet>> }[] = []
  for (const [i, leaf] of leaves.entries()) {
    // A version that is not one (no client could ask for it, nor order the page) is left out
    // rather than failing the whole index.
    const version = parseNuGet(leaf.catalogEntry.version)
    if (version) keyed.push({ leaf, version })
    if (i % LEAVES_PER_STEP === LEAVES_PER_STEP - 1) await slice.step()
  }
  const sorted = await sortCooperatively(keyed, (a, b) => compareNuGet(a.version, b.version), slice)
  const items: RegistrationLeaf[] = []
  for (const [i, { leaf }] of sorted.entries()) {
    items.push(rewriteLeaf(baseUrl, id, leaf))
    if (i % LEAVES_PER_STEP === LEAVES_PER_STEP - 1) await slice.step()
  }
  if (items.length === 0) return { '@id': index, count: 0, items: [] }
  const lower = key(sorted[0].leaf.catalogEntry.version)
  const upper = key(sorted.at(-1)!.leaf.catalogEntry.version)
  return {
    '@id': index,
    count: 1,
    items: [{ '@id': `${index}#page/${lower}/${upper}`, count: items.length, lower, upper, parent: index, items }],
  }
}

/** The leaves `visible` keeps, in their order, taking turns (each is judged by the firewall's rules). */
export async function visibleLeaves(
  leaves: Iterable<RegistrationLeaf>,
  visible: (leaf: RegistrationLeaf) => boolean,
  slice = new TimeSlice(),
): Promise<RegistrationLeaf[]> {
  const kept: RegistrationLeaf[] = []
  let seen = 0
  for (const leaf of leaves) {
    if (visible(leaf)) kept.push(leaf)
    if (++seen % LEAVES_PER_STEP === 0) await slice.step()
  }
  return kept
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
