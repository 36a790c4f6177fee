import { ECOSYSTEMS, type Ecosystem } from './schema'
import {
  MAVEN_ORDERING,
  NUGET_ORDERING,
  PEP440_ORDERING,
  SEMVER_ORDERING,
  type VersionOrdering,
} from './rules/versions/orderings'
import { comparatorRanges, SEMVER_RANGES, type RangeSyntax } from './rules/versions/range-syntax'

/**
 * What the firewall's domain knows about one ecosystem. Every ecosystem has one entry in
 * `ECOSYSTEM_PROFILES` (a `Record<Ecosystem, ...>`), so adding one to `ECOSYSTEMS` without a
 * profile is a compile error; the registry adds its protocol handler in server/registry/ecosystems.ts.
 */
export interface EcosystemProfile {
  /** OSV's name for the ecosystem (https://ossf.github.io/osv-schema/#affectedpackage-field). */
  osvName: string
  /**
   * The form under which the registry treats two package names as the same package, so that
   * rules, exceptions and advisories compare names the way the registry does.
   */
  normalizeName(name: string): string
  ordering: VersionOrdering
  ranges: RangeSyntax
  /** Whether a rule's `versionRange` counts pre-releases in (exceptions never do). */
  rangesIncludePrereleases: boolean
  /** Which facts the registry's metadata gives the proxy, so which selectors can apply. */
  facts: EcosystemFacts
}

/** Facts only some registries supply; a selector on a fact the ecosystem lacks is refused or warned. */
export interface EcosystemFacts {
  /** `deprecated` selector: the registry marks versions deprecated. */
  deprecated: boolean
  /** `installScripts` selector: the manifest lists lifecycle scripts. */
  installScripts: boolean
  /** `license` selector: where licenses come from, or null when the metadata carries none. */
  license: string | null
  /** `minimumAge` selector: 'often-missing' warns that unknown publish times count as too new. */
  publishTime: 'known' | 'often-missing'
}

// Names: npm and Maven names are case-sensitive; PyPI follows PEP 503; NuGet ids are
// case-insensitive. npm ranges keep semver's prerelease convention; PyPI, Maven and NuGet rules
// count pre-releases in (a blocking range must not miss `2.0rc1`).
const ECOSYSTEM_PROFILES: Record<Ecosystem, EcosystemProfile> = {
  npm: {
    osvName: 'npm',
    normalizeName: (name) => name,
    ordering: SEMVER_ORDERING,
    ranges: SEMVER_RANGES,
    rangesIncludePrereleases: false,
    facts: { deprecated: true, installScripts: true, license: 'packument', publishTime: 'known' },
  },
  pypi: {
    osvName: 'PyPI',
    normalizeName: (name) => name.toLowerCase().replace(/[-_.]+/g, '-'),
    ordering: PEP440_ORDERING,
    ranges: comparatorRanges('pypi', PEP440_ORDERING),
    rangesIncludePrereleases: true,
    // Upload form; downloads ask the upstream's JSON API where it has one. Times: PEP 700.
    facts: { deprecated: false, installScripts: false, license: 'JSON API', publishTime: 'known' },
  },
  maven: {
    osvName: 'Maven',
    normalizeName: (name) => name,
    ordering: MAVEN_ORDERING,
    ranges: comparatorRanges('maven', MAVEN_ORDERING),
    rangesIncludePrereleases: true,
    // Licenses live in POMs the proxy does not parse; times come from Last-Modified, often absent.
    facts: { deprecated: false, installScripts: false, license: null, publishTime: 'often-missing' },
  },
  nuget: {
    osvName: 'NuGet',
    normalizeName: (name) => name.toLowerCase(),
    ordering: NUGET_ORDERING,
    ranges: comparatorRanges('nuget', NUGET_ORDERING),
    rangesIncludePrereleases: true,
    facts: { deprecated: false, installScripts: false, license: 'nuspec and registration', publishTime: 'known' },
  },
}

/**
 * The domain profile of an ecosystem.
 * @example ecosystemProfile('pypi').normalizeName('Foo_Bar') // 'foo-bar'
 */
export function ecosystemProfile(ecosystem: Ecosystem): EcosystemProfile {
  return ECOSYSTEM_PROFILES[ecosystem]
}

const BY_OSV_NAME = new Map(ECOSYSTEMS.map((ecosystem) => [ECOSYSTEM_PROFILES[ecosystem].osvName, ecosystem]))

/**
 * Our ecosystem for an OSV ecosystem name; undefined for ecosystems the firewall does not serve.
 * @example ecosystemForOsvName('PyPI') // 'pypi'
 */
export function ecosystemForOsvName(osvName: string): Ecosystem | undefined {
  return BY_OSV_NAME.get(osvName)
}

/**
 * The ecosystems whose registries supply a fact, e.g. for "deprecated applies to npm packages only".
 * @example ecosystemsWith('installScripts') // ['npm']
 */
export function ecosystemsWith(fact: 'deprecated' | 'installScripts'): Ecosystem[] {
  return ECOSYSTEMS.filter((ecosystem) => ECOSYSTEM_PROFILES[ecosystem].facts[fact])
}
