import { normalizePackageName } from '../../firewall/rules/names'

/** What a request below a PyPI firewall's prefix asks for. */
type PypiPath =
  | { kind: 'root' }
  | { kind: 'project'; project: string }
  | { kind: 'file'; project: string; filename: string }
  | { kind: 'upload' }

const decode = (segment: string): string | null => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return null
  }
}

/**
 * Parses `simple/`, `simple/{name}/`, `files/{project}/{filename}` and `legacy/` (also the
 * bare prefix, where twine posts when the repository URL is the firewall URL itself).
 * @example parsePypiPath('/simple/Foo_Bar/') // { kind: 'project', project: 'foo-bar' }
 */
export function parsePypiPath(path: string, method: string): PypiPath | null {
  const segments = path.split('/').filter(Boolean).map(decode)
  if (segments.some((s) => s === null || s === '..' || s.includes('/'))) return null
  const [first, ...rest] = segments as string[]
  if (first === 'simple' && rest.length === 0) return { kind: 'root' }
  if (first === 'simple' && rest.length === 1)
    return { kind: 'project', project: normalizePackageName('pypi', rest[0]) }
  if (first === 'files' && rest.length === 2)
    return { kind: 'file', project: normalizePackageName('pypi', rest[0]), filename: rest[1] }
  if ((first === 'legacy' && rest.length === 0) || (first === undefined && method === 'POST')) return { kind: 'upload' }
  return null
}

const SDIST = /\.(tar\.gz|tar\.bz2|tar\.xz|tgz|tar|zip)$/i

/**
 * The version a distribution file name carries: wheel and egg names have it as their second
 * dash-separated field; an sdist's is what follows the project name (which may itself hold
 * dashes, so the split point is where the prefix normalises to the project).
 * @example versionOfFile('foo-bar', 'foo_bar-1.0-py3-none-any.whl') // '1.0'
 */
export function versionOfFile(project: string, filename: string): string | null {
  if (/\.(whl|egg)$/i.test(filename)) return filename.split('-')[1] ?? null
  const stem = filename.replace(SDIST, '')
  if (stem === filename) return null
  for (let i = stem.indexOf('-'); i > 0; i = stem.indexOf('-', i + 1)) {
    if (normalizePackageName('pypi', stem.slice(0, i)) === project) return stem.slice(i + 1) || null
  }
  const last = stem.lastIndexOf('-')
  return last > 0 ? stem.slice(last + 1) : null
}
