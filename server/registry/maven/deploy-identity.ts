import { RegistryError } from '../responses'
import { plainFileName, UploadRefused } from '../upload-refusal'
import { xmlFields } from '../xml-fields'
import { CHECKSUMS, type MavenPath } from './paths'

// Characters of Maven coordinates (the model validator's `[A-Za-z0-9_\-.]+`) and of versions,
// classifiers and extensions as repositories hold them. Anything else (`?`, `#`, `%`, spaces)
// would change the URL the upstream is sent, or the directory it writes to.
const SEGMENT = /^[A-Za-z0-9_.+~-]+$/
const TIMESTAMP = /^\d{8}\.\d{6}-\d+/
const METADATA = 'maven-metadata.xml'

/**
 * The file a deployed companion describes: `lib-1.0.jar` for `lib-1.0.jar.sha1`,
 * `lib-1.0.jar.asc` and `lib-1.0.jar.asc.md5`.
 */
function describedFile(file: string): string {
  const checksum = CHECKSUMS.find((alg) => file.endsWith(`.${alg}`))
  const base = checksum ? file.slice(0, -(checksum.length + 1)) : file
  return base.endsWith('.asc') ? base.slice(0, -4) : base
}

/** Whether `rest` (a file name after `{artifactId}-`) starts with the directory's version. */
function startsWithVersion(rest: string, version: string): boolean {
  const next = (length: number) => (rest[length] === '.' || rest[length] === '-') && rest.length > length + 1
  if (rest.startsWith(version) && next(version.length)) return true
  // A unique snapshot: `lib-1.0-20240101.120000-3.jar` in `1.0-SNAPSHOT/`.
  if (!version.endsWith('-SNAPSHOT')) return false
  const base = version.slice(0, -'SNAPSHOT'.length)
  const stamp = TIMESTAMP.exec(rest.slice(base.length))
  return rest.startsWith(base) && stamp !== null && next(base.length + stamp[0].length)
}

/**
 * Checks that a deploy path is the repository-layout path of the coordinates it is judged
 * as: plain segments of Maven's characters, group directories without dots (`org/acme`, as
 * `org.acme` is laid out), and a file named `{artifactId}-{version}[-{classifier}].{ext}`
 * (or its unique-snapshot form) inside `{artifactId}/{version}/`, its checksums and
 * signatures likewise. The upstream stores the bytes at this path, and Maven resolves them by
 * it, so `lib/1.0/lib-2.0.jar` is refused rather than judged as 1.0. Throws `UploadRefused`.
 * @example checkDeployPath('/org/acme/lib/1.0/lib-2.0.jar') // throws upload_version_mismatch
 */
export function checkDeployPath(rawPath: string): void {
  let segments: string[]
  try {
    segments = rawPath.split('/').filter(Boolean).map(decodeURIComponent)
  } catch {
    throw new RegistryError(400, `${rawPath} is not a valid path`)
  }
  const file = segments.at(-1) ?? ''
  for (const segment of segments) {
    plainFileName(segment, file)
    if (!SEGMENT.test(segment))
      throw new UploadRefused(
        'upload_file_name_invalid',
        file,
        segment,
        `the path segment ${JSON.stringify(segment)} holds characters Maven coordinates do not`,
      )
  }
  const isMetadata = describedFile(file) === METADATA
  // Below the group: `{artifactId}/{version}/{file}`, or `{artifactId}[/{version}-SNAPSHOT]/maven-metadata.xml`.
  const groupEnd = !isMetadata || /-SNAPSHOT$/.test(segments.at(-2) ?? '') ? -3 : -2
  const group = segments.slice(0, groupEnd)
  const dotted = group.find((segment) => segment.includes('.'))
  if (dotted !== undefined)
    throw new UploadRefused(
      'upload_file_name_invalid',
      group.join('/').replace(/\./g, '/'),
      group.join('/'),
      `the group directory ${dotted} holds a dot; groupId ${group.join('.')} is laid out as ${group.join('/').replace(/\./g, '/')}`,
    )
  if (isMetadata || segments.length < 4) return
  const [artifactId, version] = segments.slice(-3, -1)
  const coordinates = `${group.join('.')}:${artifactId}:${version}`
  const main = describedFile(file)
  if (!main.startsWith(`${artifactId}-`))
    throw new UploadRefused(
      'upload_name_mismatch',
      coordinates,
      file,
      `the file ${file} is not named for artifact ${artifactId} ({artifactId}-{version}[-{classifier}].{extension})`,
    )
  if (!startsWithVersion(main.slice(artifactId.length + 1), version))
    throw new UploadRefused(
      'upload_version_mismatch',
      coordinates,
      file,
      `the file ${file} is not named for version ${version} of ${artifactId} ({artifactId}-{version}[-{classifier}].{extension})`,
    )
}

/**
 * Checks that a deployed `maven-metadata.xml` names the coordinates of its path: `groupId`
 * and `artifactId` where it declares them (group-level plugin metadata declares neither),
 * and `version` in a snapshot's version-level document. Malformed XML is refused: the
 * document is merged and stored, and Maven would fail to read it.
 * @example await checkMetadataCoordinates(path, '<metadata><groupId>org.evil</groupId>...') // throws upload_name_mismatch
 */
export async function checkMetadataCoordinates(
  path: Extract<MavenPath, { kind: 'metadata' }>,
  xml: string,
): Promise<void> {
  const fields = await xmlFields(xml, ['metadata/groupId', 'metadata/artifactId', 'metadata/version'])
  if (!fields) throw new RegistryError(400, `${METADATA} is not well-formed XML (or declares a DOCTYPE)`)
  const colon = path.name.lastIndexOf(':')
  const expected: [string, string | undefined][] = [
    ['groupId', path.name.slice(0, colon)],
    ['artifactId', path.name.slice(colon + 1)],
    ['version', path.snapshotVersion],
  ]
  for (const [element, value] of expected) {
    if (value === undefined) continue
    for (const field of fields.get(`metadata/${element}`) ?? []) {
      const found = field.text.trim()
      if (found !== value)
        throw new UploadRefused(
          element === 'version' ? 'upload_version_mismatch' : 'upload_name_mismatch',
          value,
          found,
          `${METADATA} at ${path.path} declares ${element} ${found}, but its path is for ${value}`,
        )
    }
  }
}
