import { problemOf } from '../http/problem'
import { RegistryError } from './responses'

/** Why an upload was refused before its decision: its parts name different things. */
export type UploadRefusalCode =
  /** The file or body names another package than the one the upload is judged as. */
  | 'upload_name_mismatch'
  /** The file or body names another version than the one the upload is judged as. */
  | 'upload_version_mismatch'
  /** A file name that is no plain name of its kind (path separator, dot segment, no parse). */
  | 'upload_file_name_invalid'
  /** The upload holds a part twice that the upstream may read either copy of. */
  | 'upload_ambiguous'

/**
 * An upload refused with 400 because what it would be judged as (`declared`: the URL's
 * package, the form's name, the directory's coordinates) differs from what would go upstream
 * (`found`: the body's name, the file's name, the package's manifest). Thrown before the
 * decision and before any upstream call, so nothing is forwarded and nothing is logged. The
 * body is an RFC 9457 problem that still carries `error` (npm prints it), and pip, twine,
 * Maven and NuGet print the message as the reason phrase.
 * @example throw new UploadRefused('upload_name_mismatch', 'good', 'fw-evil', 'the file names fw-evil, the form good')
 */
export class UploadRefused extends RegistryError {
  constructor(
    readonly code: UploadRefusalCode,
    readonly declared: string,
    readonly found: string,
    message: string,
  ) {
    super(400, message)
  }

  override get contentType(): string {
    return 'application/problem+json'
  }

  override body(): Record<string, unknown> {
    return {
      ...problemOf(400, this.code, this.message, { declared: this.declared, found: this.found }),
      error: this.message,
    }
  }
}

/**
 * Refuses a client-chosen file name that is not one plain name: empty, a path separator
 * (`/`, `\`), a dot segment, or a control character. Upstreams store files under such names,
 * so `../../x` would be written elsewhere than where it is judged to go.
 * @example plainFileName('../../evil-1.0.tar.gz', 'fw-evil') // throws upload_file_name_invalid
 */
export function plainFileName(filename: string | undefined, declared: string): string {
  const name = filename ?? ''
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (!name || name === '.' || name === '..' || /[/\\\u0000-\u001f\u007f]/.test(name))
    throw new UploadRefused(
      'upload_file_name_invalid',
      declared,
      name,
      `the uploaded file name ${JSON.stringify(name)} is not a plain file name for ${declared} (no path separators or dot segments)`,
    )
  return name
}
