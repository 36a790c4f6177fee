import type { Upstream } from '../../firewall/schema'
import { logger } from '../../app/logger'
import { cachedDocument } from '../upstream/artifacts'
import type { UpstreamScope } from '../upstream/selection'
import { callUpstream } from '../upstream/client'
import { pypiUrl } from './endpoint'
import { parseFactObject } from '../fact-fetch'
import { upstreamPieces, upstreamText } from '../upstream/body-text'
import { TimeSlice } from '../../common/time-slice'
import { htmlAnchors } from './html-anchors'

/** One distribution file of a project, as an upstream index lists it. */
export interface PyFile {
  filename: string
  /** Absolute URL on the upstream (relative hrefs resolved against the page). */
  url: string
  hashes: Record<string, string>
  requiresPython?: string
  /** `true`, or the reason text, when the file is yanked (PEP 592). */
  yanked?: boolean | string
  /** PEP 700 `upload-time`, ISO 8601. */
  uploadTime?: string
  size?: number
}

/** A project page (PEP 503/691) reduced to what the proxy needs. */
export interface ProjectPage {
  name: string
  files: PyFile[]
}

const JSON_TYPE = 'application/vnd.pypi.simple.v1+json'

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const unescapeHtml = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) =>
    code[0] === '#'
      ? String.fromCodePoint(code[1].toLowerCase() === 'x' ? parseInt(code.slice(2), 16) : Number(code.slice(1)))
      : (ENTITIES[code.toLowerCase()] ?? whole),
  )

function attribute(attributes: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(` ${attributes}`)
  if (m) return unescapeHtml(m[1] ?? m[2] ?? m[3])
  return new RegExp(`\\s${name}(?=[\\s>/]|$)`, 'i').test(` ${attributes}`) ? '' : undefined
}

/** Splits `url#sha256=...` into the URL and its hash fragment (PEP 503). */
function withHash(href: string, base: string): { url: string; hashes: Record<string, string> } {
  const url = new URL(href, base)
  const hash = /^#([a-z0-9]+)=([0-9a-f]+)$/i.exec(url.hash)
  url.hash = ''
  return { url: url.toString(), hashes: hash ? { [hash[1].toLowerCase()]: hash[2].toLowerCase() } : {} }
}

/** Reads a PEP 503 HTML project page: every anchor is a file. */
async function parseHtmlPage(html: string, name: string, base: string): Promise<ProjectPage> {
  const slice = new TimeSlice()
  const files: PyFile[] = []
  for (const anchor of await htmlAnchors(html, slice)) {
    await slice.step()
    const href = attribute(anchor.attributes, 'href')
    if (!href) continue
    const { url, hashes } = withHash(href, base)
    const yanked = attribute(anchor.attributes, 'data-yanked')
    const requiresPython = attribute(anchor.attributes, 'data-requires-python')
    files.push({
      filename: unescapeHtml(anchor.text.trim()),
      url,
      hashes,
      ...(requiresPython ? { requiresPython } : {}),
      ...(yanked !== undefined ? { yanked: yanked || true } : {}),
    })
  }
  return { name, files }
}

/** Reads a PEP 691 JSON project page, file by file in slices (an upstream decides how many there are). */
async function parseJsonPage(
  doc: { name?: string; files?: Record<string, unknown>[] },
  name: string,
  base: string,
): Promise<ProjectPage> {
  const slice = new TimeSlice()
  const files: PyFile[] = []
  for (const file of Array.isArray(doc.files) ? doc.files : []) {
    await slice.step()
    if (!file || typeof file.filename !== 'string' || typeof file.url !== 'string') continue
    const { url, hashes } = withHash(file.url, base)
    files.push({
      filename: file.filename,
      url,
      hashes: { ...hashes, ...((file.hashes as Record<string, string>) ?? {}) },
      ...(typeof file['requires-python'] === 'string' ? { requiresPython: file['requires-python'] } : {}),
      ...(file.yanked ? { yanked: file.yanked as boolean | string } : {}),
      ...(typeof file['upload-time'] === 'string' ? { uploadTime: file['upload-time'] } : {}),
      ...(typeof file.size === 'number' ? { size: file.size } : {}),
    })
  }
  return { name: doc.name ?? name, files }
}

/** Basic auth as PyPI servers expect it: a token goes as the password of `__token__`. */
export function pypiAuthorization(upstream: Upstream): string | undefined {
  const c = upstream.credentials
  if (!c) return undefined
  const [user, password] = 'token' in c ? ['__token__', c.token] : [c.username, c.password]
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
}

/**
 * The project page of `project` (normalised name) on one upstream, whose simple index is at
 * `{root}/simple/` (endpoint.ts): JSON asked for first, HTML understood. Null when the upstream does
 * not have the project (404, or 401/403, which are logged).
 */
export async function fetchProjectPage(
  scope: UpstreamScope,
  upstream: Upstream,
  project: string,
): Promise<ProjectPage | null> {
  return cachedDocument(scope, upstream, `pypi:${project}`, async () => {
    const response = await callUpstream(
      scope.transport,
      upstream,
      pypiUrl(upstream, `simple/${encodeURIComponent(project)}/`),
      {
        headers: { accept: `${JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1` },
        authorization: pypiAuthorization(upstream),
        timeoutMs: scope.timeoutMs,
      },
    )
    if (!response.ok) {
      await response.arrayBuffer().catch(() => undefined)
      if (response.status !== 404)
        logger.warn('upstream refused project page', {
          upstream: upstream.id,
          firewall: scope.firewall.id,
          status: response.status,
        })
      return null
    }
    const base = response.url || pypiUrl(upstream, `simple/${project}/`)
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      // Upload times (minimumAge) come from here: an unreadable page is a 502, not a 500.
      return await parseJsonPage(
        await parseFactObject(await upstreamPieces(response), `the project page of ${project}`, upstream.id),
        project,
        base,
      )
    }
    return await parseHtmlPage(await upstreamText(response), project, base)
  })
}

/** Project names of an upstream's root index (`simple/`), JSON or HTML. */
export async function fetchProjectList(scope: UpstreamScope, upstream: Upstream): Promise<string[] | null> {
  const response = await callUpstream(scope.transport, upstream, pypiUrl(upstream, 'simple/'), {
    headers: { accept: `${JSON_TYPE}, text/html;q=0.1` },
    authorization: pypiAuthorization(upstream),
    timeoutMs: scope.timeoutMs,
  })
  if (!response.ok) {
    await response.arrayBuffer().catch(() => undefined)
    return null
  }
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    // Read as every upstream answer is: within UPSTREAM_MAX_BODY and its member bound, in turns.
    const doc = (await parseFactObject(await upstreamPieces(response), 'the project list', upstream.id)) as {
      projects?: unknown
    }
    return (Array.isArray(doc.projects) ? doc.projects : [])
      .map((p: { name?: unknown } | null) => p?.name)
      .filter((name): name is string => typeof name === 'string')
  }
  return (await htmlAnchors(await upstreamText(response))).map((anchor) => unescapeHtml(anchor.text.trim()))
}
