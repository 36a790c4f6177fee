import { firstFound, type UpstreamScope } from '../upstream/selection'
import type { VersionList } from '../version-list'
import { fetchMavenFile } from './download'
import { metadataVersions } from './metadata'

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
 * Every version `maven-metadata.xml` lists on the first upstream (lookup order) that has it.
 * Maven repositories publish no dates or licenses there (a POM would be one request per
 * version), so the panel says so instead. Null when none has it.
 * @example await mavenVersions(scope, 'com.acme:lib')
 */
export async function mavenVersions(
  scope: UpstreamScope,
  name: string,
): Promise<(VersionList & { upstream: string }) | null> {
  const path = metadataPath(name)
  if (!path) return null
  const found = await firstFound(scope, (upstream) => fetchMavenFile(scope, upstream, path))
  if (!found) return null
  const xml = found.value.bytes.toString('utf8')
  const release = metadataRelease(xml)
  return {
    upstream: found.upstream.id,
    versions: metadataVersions(xml).map((version) => ({ ecosystem: 'maven', packageName: name, version })),
    ...(release ? { latest: release } : {}),
    notes: {
      published: 'not published by Maven (maven-metadata.xml lists versions without dates)',
      license: 'not shown: Maven declares licenses in each version’s POM, which the panel does not fetch',
      installScripts: 'Maven has no install scripts: resolving a dependency runs no code of it',
    },
  }
}
