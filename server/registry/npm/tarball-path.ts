/** A tarball request path taken apart. */
export interface TarballPath {
  name: string
  version: string
  file: string
}

/** The part of a package name after its scope: `@scope/pkg` -> `pkg`. */
function unscoped(name: string): string {
  return name.startsWith('@') ? name.slice(name.indexOf('/') + 1) : name
}

/**
 * npm's tarball file name for a version.
 * @example tarballFileName('@scope/pkg', '1.2.3') // 'pkg-1.2.3.tgz'
 */
export function tarballFileName(name: string, version: string): string {
  return `${unscoped(name)}-${version}.tgz`
}

const SCOPED = /^(@[^/]+\/[^/]+)\/-\/(?:@[^/]+\/)?([^/]+\.tgz)$/
const UNSCOPED = /^([^@/][^/]*)\/-\/([^/]+\.tgz)$/

/**
 * Parses `/{name}/-/{file}.tgz`, `/@scope/name/-/name-1.2.3.tgz` and `/@scope%2fname/-/...`
 * (the file may also carry the scope, `@scope/name-1.2.3.tgz`, as some registries write it).
 * Returns `null` when the path is not a tarball path or the file does not belong to the name.
 * @example parseTarballPath('/@scope/pkg/-/pkg-1.2.3.tgz') // { name: '@scope/pkg', version: '1.2.3', file: 'pkg-1.2.3.tgz' }
 */
export function parseTarballPath(path: string): TarballPath | null {
  let decoded: string
  try {
    decoded = decodeURIComponent(path.split(/[?#]/)[0]).replace(/^\/+/, '')
  } catch {
    return null
  }
  const match = SCOPED.exec(decoded) ?? UNSCOPED.exec(decoded)
  if (!match) return null
  const [, name, file] = match
  const prefix = `${unscoped(name)}-`
  if (!file.startsWith(prefix)) return null
  const version = file.slice(prefix.length, -'.tgz'.length)
  if (version === '') return null
  return { name, version, file }
}
