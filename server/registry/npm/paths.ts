/** A package request path taken apart: the package name and the segments after it. */
interface PackagePath {
  name: string
  rest: string[]
}

const NAME = /^(?:@[A-Za-z0-9~][A-Za-z0-9._~-]*\/)?[A-Za-z0-9~][A-Za-z0-9._~-]*$/

const decode = (segment: string): string | null => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return null
  }
}

/**
 * Parses `/{name}[/...]` where a scoped name arrives as `@scope%2fname` (npm's form) or as
 * two segments `@scope/name`. Returns null when no valid package name starts the path.
 * @example parsePackagePath('/@acme%2fwidget/1.0.0') // { name: '@acme/widget', rest: ['1.0.0'] }
 */
export function parsePackagePath(path: string): PackagePath | null {
  const segments = path.replace(/^\/+/, '').split('/')
  const first = decode(segments[0] ?? '')
  if (!first) return null
  let name = first
  let restStart = 1
  if (first.startsWith('@') && !first.includes('/')) {
    const second = decode(segments[1] ?? '')
    if (!second) return null
    name = `${first}/${second}`
    restStart = 2
  }
  if (!NAME.test(name)) return null
  const rest: string[] = []
  for (const segment of segments.slice(restStart)) {
    if (segment === '') continue
    const decoded = decode(segment)
    if (decoded === null) return null
    rest.push(decoded)
  }
  return { name, rest }
}
