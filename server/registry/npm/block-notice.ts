import type { IncomingHttpHeaders } from 'node:http'
import type { ProxyRequest } from '../proxy-request'
import { exceptionFormLink, RegistryError } from '../responses'

/**
 * bun prints neither the body nor the reason phrase of a refused tarball, only
 * `error: GET <url> - 403`, and the URL it prints is the last one of a redirect chain. So a
 * blocked tarball answers bun with a redirect to a notice URL that names the request id, the
 * package and the rule, and the notice answers 403: the user reads all three in bun's one line.
 * pnpm 12 gets no redirect: it prints the URL it first asked for, so a notice URL would not show
 * (nor does anything else of a refused tarball); its packument is refused instead when every
 * version is blocked (whole-package-block.ts), and otherwise names signed notice URLs as the
 * tarballs of its blocked versions (tarball-notice.ts, paths ending in `.tgz`).
 */
export function printsOnlyTheUrl(headers: IncomingHttpHeaders): boolean {
  return /^bun\//i.test(String(headers['user-agent'] ?? ''))
}

const NOTICE = /^\/-\/blocked\/(req-[0-9a-z]{1,64})(?:\/[^?#]*)?$/

/**
 * Redirects a blocked tarball request to its notice:
 * `{prefix}-/blocked/{requestId}/{name}@{version}/rule/{ruleId}`.
 */
export function redirectToBlockNotice(request: ProxyRequest, name: string, version: string, ruleId: string): void {
  const tail = [`${name}@${version}`, 'rule', ruleId].map(encodeURIComponent).join('/')
  const res = request.response
  res.statusCode = 307
  res.setHeader('location', `${request.baseUrl}-/blocked/${request.meta.requestId}/${tail}`)
  res.setHeader('content-length', 0)
  res.end()
}

/** Whether a path is a block notice (`/-/blocked/req-...`). */
export function isBlockNotice(path: string): boolean {
  return path.startsWith('/-/blocked/')
}

/**
 * `GET /-/blocked/{requestId}/...`: always 403, naming the request id of the block (the only
 * part of the path it trusts) and the exception form pre-filled from it.
 */
export function serveBlockNotice(request: ProxyRequest): never {
  const requestId = NOTICE.exec(request.path)?.[1]
  if (!requestId) throw new RegistryError(404, `${request.path} is not a block notice`)
  const link = exceptionFormLink({ ...request, meta: { requestId } })
  throw new RegistryError(
    403,
    `blocked by firewall ${request.firewall.id}. Request id: ${requestId}. Request an exception: ${link}`,
  )
}
