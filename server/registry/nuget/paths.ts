import { normalizeNuGet } from '../../firewall/rules/versions/nuget'

/** What a request below a NuGet firewall's prefix asks for. */
export type NugetPath =
  | { kind: 'service-index' }
  | { kind: 'versions'; id: string }
  | { kind: 'content'; id: string; version: string; file: 'nupkg' | 'nuspec' }
  | { kind: 'registration'; id: string }
  | { kind: 'leaf'; id: string; version: string }
  | { kind: 'push' }
  | { kind: 'unlist'; id: string; version: string }

const ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/

/**
 * Parses the proxy's NuGet paths: `v3/index.json`, the flat container (`v3-flatcontainer/
 * {id}/index.json`, `.../{id}/{version}/{id}.{version}.nupkg|{id}.nuspec`), registrations
 * (`v3/registration/{id}/index.json`, `.../{id}/{version}.json`) and the V2 publish API
 * (`api/v2/package`, `api/v2/package/{id}/{version}`). Read ids come back lower-cased, versions
 * normalised and lower-cased, as flat-container URLs spell them.
 */
export function parseNugetPath(path: string): NugetPath | null {
  let s: string[]
  try {
    s = path.split('/').filter(Boolean).map(decodeURIComponent)
  } catch {
    return null
  }
  const id = (text: string | undefined) => (text && ID.test(text) ? text.toLowerCase() : null)
  const version = (text: string | undefined) => (text ? (normalizeNuGet(text)?.toLowerCase() ?? null) : null)
  const joined = s.join('/')
  if (joined === 'v3/index.json') return { kind: 'service-index' }
  if (joined === 'api/v2/package') return { kind: 'push' }
  if (s[0] === 'api' && s[1] === 'v2' && s[2] === 'package' && s.length === 5) {
    // The id keeps the client's spelling: the target and the package.unlisted event see it.
    const [i, v] = [id(s[3]), version(s[4])]
    return i && v ? { kind: 'unlist', id: s[3], version: v } : null
  }
  if (s[0] === 'v3-flatcontainer') {
    const i = id(s[1])
    if (!i) return null
    if (s.length === 3 && s[2] === 'index.json') return { kind: 'versions', id: i }
    const v = version(s[2])
    if (s.length !== 4 || !v) return null
    const file = s[3].toLowerCase()
    if (file === `${i}.${v}.nupkg`) return { kind: 'content', id: i, version: v, file: 'nupkg' }
    if (file === `${i}.nuspec`) return { kind: 'content', id: i, version: v, file: 'nuspec' }
    return null
  }
  if (s[0] === 'v3' && s[1] === 'registration' && s.length === 4) {
    const i = id(s[2])
    if (!i) return null
    if (s[3] === 'index.json') return { kind: 'registration', id: i }
    const v = s[3].endsWith('.json') ? version(s[3].slice(0, -5)) : null
    return v ? { kind: 'leaf', id: i, version: v } : null
  }
  return null
}
