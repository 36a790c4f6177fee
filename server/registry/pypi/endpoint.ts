import type { Upstream } from '../../firewall/schema'
import { upstreamUrl } from '../upstream/client'

/**
 * The index root of a PyPI upstream. Users write either the root (`https://pypi.org/`) or the
 * simple index URL pip takes (`https://pypi.org/simple/`); both mean the same upstream, so a trailing `simple` segment is dropped before `simple/{name}/`,
 * `pypi/{name}/{version}/json` or an upload is addressed.
 * @example pypiRoot('https://pypi.org/simple/') // 'https://pypi.org/'
 * @example pypiRoot('https://nexus.example/repository/pypi-proxy/') // unchanged
 */
export function pypiRoot(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '')
  return `${trimmed.replace(/\/simple$/i, '')}/`
}

/**
 * `{root}/{path}` on a PyPI upstream, whichever way its endpoint was written.
 * @example pypiUrl({ endpoint: 'https://pypi.org/simple/' }, 'simple/requests/') // 'https://pypi.org/simple/requests/'
 */
export function pypiUrl(upstream: Pick<Upstream, 'endpoint'>, path: string): string {
  return upstreamUrl({ endpoint: pypiRoot(upstream.endpoint) }, path)
}
