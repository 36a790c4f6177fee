import type { Upstream } from '../../firewall/schema'
import { firstFound, type UpstreamScope } from '../upstream/selection'
import type { VersionList } from '../version-list'
import { fetchMavenFile } from './download'
import { metadataVersions, TooManyVersions } from './metadata'
import { UPSTREAM_MAX_MEMBERS, UpstreamTooManyMembers } from '../upstream/member-limit'

/**
 * The artifact-level `maven-metadata.xml` path of `groupId:artifactId`, or null for another shape.
 * @example metadataPath('com.acme:lib') // 'com/acme/lib/maven-metadata.xml'
 */
export function metadataPath(name: string): string | null {
  const [group, artifact, ...rest] = name.split(':')
  if (!group || !artifact || rest.length) return null
  return `${group.split('.').join('/')}/${artifact}/maven-metadata.xml`
}

/** The `<release>` a metadata document names, if any. */
export function metadataRelease(xml: string): string | undefined {
  return /<release>\s*([^<\s]+)\s*<\/release>/.exec(xml)?.[1]
}

/**
 * When one version was published, as the firewall's rules read it for Maven: the Last-Modified
 * of its POM on the upstream (download.ts). Undefined when the upstream gives none or cannot
 * be asked (the panel never fails for it).
 */
async function pomModified(scope: UpstreamScope, upstream: Upstream, name: string, version: string) {
  const [group, artifact] = name.split(':')
  const path = `${group.split('.').join('/')}/${artifact}/${version}/${artifact}-${version}.pom`
  return (await fetchMavenFile(scope, upstream, path, 'artifact').catch(() => null))?.modified
}

/**
 * Every version `maven-metadata.xml` lists on the first upstream (lookup order) that has it, and
 * the publish time of `version` (one POM request). Maven repositories publish no dates or
 * licenses in the metadata (a POM per version would be a request each), so the panel says so.
 * Null when no upstream has it.
 * @example await mavenVersions(scope, 'com.acme:lib', '1.0')
 */
export async function mavenVersions(
  scope: UpstreamScope,
  name: string,
  version?: string,
): Promise<(VersionList & { upstream: string }) | null> {
  const path = metadataPath(name)
  if (!path) return null
  const found = await firstFound(scope, (upstream) => fetchMavenFile(scope, upstream, path))
  if (!found) return null
  const xml = found.value.bytes.toString('utf8')
  const release = metadataRelease(xml)
  let listed: string[]
  try {
    listed = metadataVersions(xml, UPSTREAM_MAX_MEMBERS)
  } catch (error) {
    if (error instanceof TooManyVersions) throw new UpstreamTooManyMembers(found.upstream.id, path)
    throw error
  }
  const published =
    version && listed.includes(version) ? await pomModified(scope, found.upstream, name, version) : undefined
  return {
    upstream: found.upstream.id,
    versions: listed.map((v) => ({
      ecosystem: 'maven',
      packageName: name,
      version: v,
      ...(v === version && published ? { published } : {}),
    })),
    ...(release ? { latest: release } : {}),
    notes: {
      published:
        'not published by Maven (maven-metadata.xml lists versions without dates); ' +
        "the requested version's is its POM's Last-Modified, which the firewall's rules read too",
      license: "not shown: Maven declares licenses in each version's POM, which the panel does not read",
      installScripts: 'Maven has no install scripts: resolving a dependency runs no code of it',
    },
  }
}
