import { unzipSync } from 'fflate'
import { normalizeNuGet } from '../../firewall/rules/versions/nuget'
import { RegistryError } from '../responses'
import { plainFileName, UploadRefused } from '../upload-refusal'
import { xmlFields } from '../xml-fields'
import { readZipEntry } from './nupkg'

/** What a push is judged as: the nuspec's identity and declared license expression. */
interface PushedPackage {
  id: string
  /** NuGet's normalised form (`1.0` -> `1.0.0`, build metadata dropped). */
  version: string
  license?: string
}

// NuGet's package id rule (PackageIdValidator): word runs joined by `.`, `-` or `_`, at most 100.
const PACKAGE_ID = /^[\p{L}\p{N}_]+(?:[._-][\p{L}\p{N}_]+)*$/u
const MAX_ID_LENGTH = 100
/** Largest nuspec read (inflated): real ones are a few KB; parsing is about a microsecond a byte. */
const MAX_MANIFEST_BYTES = 1024 * 1024
const FIELDS = ['package/metadata/id', 'package/metadata/version', 'package/metadata/license'] as const

const invalid = (message: string) => new RegistryError(400, message)

/** Every entry name of the zip's central directory, nothing inflated. Null when it is no zip. */
function entryNames(zip: Buffer): string[] | null {
  const names: string[] = []
  try {
    unzipSync(zip, { filter: (file) => (names.push(file.name), false) })
  } catch {
    return null
  }
  return names
}

/** The single manifest entry at the package root; a second one is ambiguous (NuGet refuses it too). */
function manifestEntry(names: readonly string[]): string {
  const manifests = names.filter((name) => !name.includes('/') && name.toLowerCase().endsWith('.nuspec'))
  if (manifests.length === 0) throw invalid('the pushed package holds no .nuspec at its root')
  if (manifests.length > 1)
    throw new UploadRefused(
      'upload_ambiguous',
      manifests[0],
      manifests.slice(1).join(', '),
      `the pushed package holds ${manifests.length} manifests at its root (${manifests.join(', ')})`,
    )
  const seen = new Set<string>()
  const repeated = names.map((name) => name.toLowerCase()).find((name) => seen.size === seen.add(name).size)
  if (repeated !== undefined)
    throw new UploadRefused(
      'upload_ambiguous',
      repeated,
      repeated,
      `the pushed package holds the entry ${repeated} twice; zip readers differ on which copy counts`,
    )
  return manifests[0]
}

/** The one element at `path`; none or several (NuGet reads the first, others the last) is refused. */
function single(fields: Map<string, { text: string }[]>, path: (typeof FIELDS)[number], what: string) {
  const found = fields.get(path) ?? []
  if (found.length === 0) throw invalid(`the nuspec declares no ${what}`)
  if (found.length > 1)
    throw new UploadRefused(
      'upload_ambiguous',
      found[0].text.trim(),
      found[1].text.trim(),
      `the nuspec declares ${found.length} ${what} elements`,
    )
  return found[0]
}

/**
 * The identity a pushed `.nupkg` is judged as, read the way NuGet servers read it: the one
 * `.nuspec` at the zip root, parsed as XML (a comment or CDATA section cannot show one id to
 * the firewall and another to the feed), `package/metadata/id` and `version` each exactly
 * once. The manifest's entry name is `{id}.nuspec` (NuGet's pack writes it so) and must name
 * the same id, case-insensitively; the version is judged in NuGet's normalised form. Throws
 * `UploadRefused` (400, both values named) on a mismatch or an ambiguity, and a plain 400 on
 * a package that is not one.
 * @example await pushedPackageIdentity(nupkgBytes, 'package.nupkg') // { id: 'Acme.Core', version: '1.0.0', license: 'MIT' }
 */
export async function pushedPackageIdentity(nupkg: Buffer, filename: string | undefined): Promise<PushedPackage> {
  if (filename !== undefined) plainFileName(filename, 'the pushed package')
  const names = entryNames(nupkg)
  if (!names) throw invalid('the pushed package is not a zip archive (.nupkg)')
  const entry = manifestEntry(names)
  const bytes = readZipEntry(nupkg, (name) => name === entry, MAX_MANIFEST_BYTES)
  if (!bytes) throw invalid(`the manifest ${entry} is larger than ${MAX_MANIFEST_BYTES} bytes`)
  const fields = await xmlFields(bytes.toString('utf8'), FIELDS)
  if (!fields) throw invalid(`the manifest ${entry} is not well-formed XML (or declares a DOCTYPE)`)
  const id = single(fields, 'package/metadata/id', 'id').text.trim()
  const rawVersion = single(fields, 'package/metadata/version', 'version').text.trim()
  if (!PACKAGE_ID.test(id) || id.length > MAX_ID_LENGTH)
    throw invalid(`the nuspec id ${JSON.stringify(id)} is no NuGet package id`)
  const version = normalizeNuGet(rawVersion)
  if (!version) throw invalid(`the nuspec version ${JSON.stringify(rawVersion)} is no NuGet version`)
  const stem = entry.slice(0, -'.nuspec'.length)
  if (stem.toLowerCase() !== id.toLowerCase())
    throw new UploadRefused(
      'upload_name_mismatch',
      id,
      stem,
      `the manifest is named ${entry}, but declares the id ${id}`,
    )
  const licenses = fields.get('package/metadata/license') ?? []
  const expression = licenses.length === 1 && licenses[0].attributes.get('type') === 'expression'
  const license = expression ? licenses[0].text.trim() : ''
  return { id, version, ...(license ? { license } : {}) }
}
