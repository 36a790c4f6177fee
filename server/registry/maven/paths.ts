/** Checksum files Maven writes and reads next to every file. */
export const CHECKSUMS = ['md5', 'sha1', 'sha256', 'sha512'] as const
export type ChecksumAlgorithm = (typeof CHECKSUMS)[number]

/** What a repository-layout path names. */
export type MavenPath =
  | {
      kind: 'file'
      /** `groupId:artifactId`, the name rules and OSV records use. */
      name: string
      version: string
      /** The path below the firewall prefix, no leading slash. */
      path: string
      /** Set for `.md5`/`.sha1`/... and `.asc` companions: the file they describe. */
      companionOf?: string
      checksum?: ChecksumAlgorithm
    }
  | { kind: 'metadata'; name: string; path: string; snapshotVersion?: string; checksum?: ChecksumAlgorithm }

const METADATA = 'maven-metadata.xml'

/**
 * Parses `{group/path}/{artifactId}/{version}/{file}` and `.../maven-metadata.xml[.sha1]`
 * (artifact-level, or version-level under a `-SNAPSHOT` directory). Null for anything else.
 * @example parseMavenPath('/com/acme/lib/1.0/lib-1.0.jar') // { kind: 'file', name: 'com.acme:lib', version: '1.0', ... }
 */
export function parseMavenPath(rawPath: string): MavenPath | null {
  let segments: string[]
  try {
    segments = rawPath.split('/').filter(Boolean).map(decodeURIComponent)
  } catch {
    return null
  }
  if (segments.some((s) => s === '.' || s === '..' || s.includes('/') || s.includes('\\'))) return null
  const path = segments.join('/')
  const last = segments.at(-1) ?? ''
  const checksum = CHECKSUMS.find((alg) => last.endsWith(`.${alg}`))
  const base = checksum ? last.slice(0, -(checksum.length + 1)) : last
  if (base === METADATA) {
    const dirs = segments.slice(0, -1)
    const snapshot = /-SNAPSHOT$/.test(dirs.at(-1) ?? '') ? dirs.pop() : undefined
    if (dirs.length < 2) return null
    return {
      kind: 'metadata',
      name: `${dirs.slice(0, -1).join('.')}:${dirs.at(-1)}`,
      path,
      ...(snapshot ? { snapshotVersion: snapshot } : {}),
      ...(checksum ? { checksum } : {}),
    }
  }
  if (segments.length < 4) return null
  const [artifactId, version] = segments.slice(-3, -1)
  if (!base.startsWith(`${artifactId}-`)) return null
  const main = base.endsWith('.asc') ? base.slice(0, -4) : base
  return {
    kind: 'file',
    name: `${segments.slice(0, -3).join('.')}:${artifactId}`,
    version,
    path,
    ...(main !== last ? { companionOf: main } : {}),
    ...(checksum ? { checksum } : {}),
  }
}
