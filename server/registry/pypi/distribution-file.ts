import { normalizePackageName } from '../../firewall/rules/names'
import { sameVersion, versionOrdering } from '../../firewall/rules/versions'
import { plainFileName, UploadRefused } from '../upload-refusal'

/** What a distribution file's name says it holds. */
interface DistributionFile {
  kind: 'wheel' | 'sdist'
  /** The project name as the file spells it (wheels escape `-` as `_`). */
  name: string
  version: string
}

// Wheel name fields (binary distribution format): a name of letters, digits, `_` and `.`,
// a build tag that starts with a digit, and non-empty tags without dashes.
const WHEEL_NAME = /^[A-Za-z0-9_.]+$/
const BUILD_TAG = /^\d[A-Za-z0-9_.]*$/
const TAG = /^[A-Za-z0-9_.]+$/
const SDIST = /\.(tar\.gz|zip)$/
// What a PEP 440 version can be spelled with in a file name (no spaces, no dashes).
const VERSION = /^[A-Za-z0-9_.!+]+$/
const isVersion = (text: string) => VERSION.test(text) && versionOrdering('pypi').valid(text)

/**
 * Parses a wheel name (`{name}-{version}(-{build})?-{py}-{abi}-{plat}.whl`) or a source
 * distribution name (`{name}-{version}.tar.gz` / `.zip`, split at the last dash, as
 * `packaging.utils.parse_sdist_filename` does). The version must be PEP 440. Null for
 * anything else (eggs and other legacy formats are no longer accepted by PyPI either).
 * @example parseDistributionFile('fw_evil-1.0-py3-none-any.whl') // { kind: 'wheel', name: 'fw_evil', version: '1.0' }
 */
export function parseDistributionFile(filename: string): DistributionFile | null {
  if (filename.endsWith('.whl')) {
    const fields = filename.slice(0, -4).split('-')
    if (fields.length !== 5 && fields.length !== 6) return null
    const [name, version] = fields
    if (fields.length === 6 && !BUILD_TAG.test(fields[2])) return null
    if (!WHEEL_NAME.test(name) || !fields.slice(-3).every((tag) => TAG.test(tag))) return null
    return isVersion(version) ? { kind: 'wheel', name, version } : null
  }
  const extension = SDIST.exec(filename)
  if (!extension) return null
  const stem = filename.slice(0, -extension[0].length)
  const dash = stem.lastIndexOf('-')
  if (dash <= 0) return null
  const version = stem.slice(dash + 1)
  return isVersion(version) ? { kind: 'sdist', name: stem.slice(0, dash), version } : null
}

/**
 * Checks that a legacy upload's file is what its form says: the file name parses as a wheel
 * or sdist whose project normalises (PEP 503) to the form's `name` and whose version equals
 * the form's `version` under PEP 440 (`1.0` = `1.0.0`, as `canonicalize_version`). The
 * publish target files the upload under the file's own name, so the decision must be about
 * that name. Throws `UploadRefused` naming both values.
 * @example checkDistributionFile('good', '1.0', 'fw_evil-1.0-py3-none-any.whl') // throws upload_name_mismatch
 */
export function checkDistributionFile(name: string, version: string, filename: string | undefined): void {
  const plain = plainFileName(filename, name)
  const file = parseDistributionFile(plain)
  if (!file)
    throw new UploadRefused(
      'upload_file_name_invalid',
      `${name} ${version}`,
      plain,
      `the file name ${plain} is neither a wheel ({name}-{version}(-{build})?-{python}-{abi}-{platform}.whl) nor an sdist ({name}-{version}.tar.gz or .zip)`,
    )
  const [declared, found] = [normalizePackageName('pypi', name), normalizePackageName('pypi', file.name)]
  if (declared !== found)
    throw new UploadRefused(
      'upload_name_mismatch',
      name,
      file.name,
      `the file ${plain} is for project ${found}, but the upload names project ${declared}`,
    )
  if (!sameVersion('pypi', version, file.version))
    throw new UploadRefused(
      'upload_version_mismatch',
      version,
      file.version,
      `the file ${plain} is version ${file.version}, but the upload names version ${version}`,
    )
}
