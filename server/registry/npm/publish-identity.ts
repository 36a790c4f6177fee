import { own } from '../../common/own'
import { UploadRefused } from '../upload-refusal'

const show = (value: unknown) =>
  typeof value === 'string' ? value : value === undefined ? '(none)' : JSON.stringify(value)

/** Refuses a document field that names another package or version than the one judged. */
function expectEqual(
  code: 'upload_name_mismatch' | 'upload_version_mismatch',
  field: string,
  declared: string,
  found: unknown,
): void {
  if (found === declared) return
  throw new UploadRefused(code, declared, show(found), `${field} is ${show(found)}, but the upload is for ${declared}`)
}

/**
 * The attachment names npm writes for a version: `{name}-{version}.tgz` (libnpmpublish keeps
 * the scope: `@acme/widget-1.0.0.tgz`), the same without the scope (what registries store the
 * tarball as, and older clients sent), and the provenance bundle `{name}-{version}.sigstore`.
 */
function attachmentNames(name: string, version: string): string[] {
  const bare = name.startsWith('@') ? name.slice(name.indexOf('/') + 1) : name
  return [`${name}-${version}.tgz`, `${bare}-${version}.tgz`, `${name}-${version}.sigstore`]
}

/**
 * Checks that an npm publish body (`PUT /{name}` with `_attachments`) is about the URL's
 * package only: `name` and `_id` equal it, every `versions` key equals that manifest's
 * `version` (and its `name` the package), and every attachment is named for one of those
 * versions. The publish target files the body under what it names, so the upload decision,
 * which reads the URL's name and the `versions` keys, must be about exactly that. Throws
 * `UploadRefused` (400) naming both values.
 * @example checkPublishIdentity('good1', { name: 'evil-x', _id: 'evil-x', versions: {...} }) // throws upload_name_mismatch
 */
export function checkPublishIdentity(name: string, body: Record<string, unknown>): void {
  expectEqual('upload_name_mismatch', 'the body name', name, body.name)
  expectEqual('upload_name_mismatch', 'the body _id', name, body._id)
  const versions = body.versions
  if (!versions || typeof versions !== 'object' || Array.isArray(versions))
    throw new UploadRefused('upload_version_mismatch', name, show(versions), 'a publish body needs a versions object')
  const allowed = new Set<string>()
  for (const [key, manifest] of Object.entries(versions as Record<string, unknown>)) {
    if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest))
      throw new UploadRefused('upload_version_mismatch', key, show(manifest), `versions[${key}] is not a manifest`)
    const fields = manifest as Record<string, unknown>
    expectEqual('upload_version_mismatch', `versions[${key}].version`, key, fields.version)
    expectEqual('upload_name_mismatch', `versions[${key}].name`, name, fields.name)
    if (own(fields, '_id') !== undefined)
      expectEqual('upload_name_mismatch', `versions[${key}]._id`, `${name}@${key}`, fields._id)
    for (const file of attachmentNames(name, key)) allowed.add(file)
  }
  const attachments = body._attachments
  if (!attachments || typeof attachments !== 'object' || Array.isArray(attachments)) return
  for (const file of Object.keys(attachments)) {
    if (allowed.has(file)) continue
    const [first] = Object.keys(versions)
    throw new UploadRefused(
      'upload_file_name_invalid',
      first === undefined ? name : `${name}-${first}.tgz`,
      file,
      `the attachment ${JSON.stringify(file)} is not named for a version of ${name} in this publish ({name}-{version}.tgz)`,
    )
  }
}
