import { normalizePackageName } from '../../firewall/rules/names'
import type { ProjectPage } from './simple-index'
import { versionOfFile } from './paths'

/** The representations of the simple API (PEP 691 "Choosing a format"). */
type SimpleFormat = 'json' | 'html-v1' | 'html'

const CONTENT_TYPES: Record<SimpleFormat, string> = {
  json: 'application/vnd.pypi.simple.v1+json',
  'html-v1': 'application/vnd.pypi.simple.v1+html',
  html: 'text/html',
}

const OFFERED: [string, SimpleFormat][] = [
  ['application/vnd.pypi.simple.v1+json', 'json'],
  ['application/vnd.pypi.simple.latest+json', 'json'],
  ['application/vnd.pypi.simple.v1+html', 'html-v1'],
  ['application/vnd.pypi.simple.latest+html', 'html-v1'],
  ['text/html', 'html'],
]

/**
 * Picks the format by the Accept header's q-values (PEP 691 content negotiation); no Accept,
 * `*\/*` or nothing we offer falls back to text/html, which every installer understands.
 * @example negotiateFormat('application/vnd.pypi.simple.v1+json, text/html;q=0.01') // 'json'
 */
export function negotiateFormat(accept: string | undefined): SimpleFormat {
  let best: { format: SimpleFormat; q: number } = { format: 'html', q: 0 }
  for (const item of (accept ?? '').split(',')) {
    const [type, ...params] = item.trim().toLowerCase().split(';')
    const q = Number(/q=([\d.]+)/.exec(params.join(';'))?.[1] ?? 1)
    const format = OFFERED.find(([offered]) => offered === type.trim())?.[1]
    if (format && q > best.q) best = { format, q }
  }
  return best.format
}

export const contentTypeOf = (format: SimpleFormat) => CONTENT_TYPES[format]

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The proxy URL of a file: `{base}files/{project}/{filename}`. */
export const proxyFileUrl = (baseUrl: string, project: string, filename: string) =>
  `${baseUrl}files/${encodeURIComponent(project)}/${encodeURIComponent(filename)}`

/**
 * A project page with file URLs pointing at the proxy. JSON claims api-version 1.1 (PEP 700:
 * `versions`, `size`, `upload-time`) only when every file has a size, which 1.1 requires.
 */
export function renderProject(page: ProjectPage, baseUrl: string, format: SimpleFormat): string {
  const project = normalizePackageName('pypi', page.name)
  if (format === 'json') {
    const v11 = page.files.every((file) => file.size !== undefined)
    const files = page.files.map((file) => ({
      filename: file.filename,
      url: proxyFileUrl(baseUrl, project, file.filename),
      hashes: file.hashes,
      ...(file.requiresPython ? { 'requires-python': file.requiresPython } : {}),
      ...(file.yanked ? { yanked: file.yanked } : {}),
      ...(file.uploadTime ? { 'upload-time': file.uploadTime } : {}),
      ...(v11 ? { size: file.size } : {}),
    }))
    const versions = [
      ...new Set(page.files.map((f) => versionOfFile(project, f.filename)).filter((v): v is string => Boolean(v))),
    ]
    return JSON.stringify({
      meta: { 'api-version': v11 ? '1.1' : '1.0' },
      name: page.name,
      files,
      ...(v11 ? { versions } : {}),
    })
  }
  const links = page.files.map((file) => {
    const [algorithm, digest] =
      Object.entries(file.hashes).find(([a]) => a === 'sha256') ?? Object.entries(file.hashes)[0] ?? []
    const href = proxyFileUrl(baseUrl, project, file.filename) + (algorithm ? `#${algorithm}=${digest}` : '')
    const python = file.requiresPython ? ` data-requires-python="${escapeHtml(file.requiresPython)}"` : ''
    const yanked = file.yanked ? ` data-yanked="${typeof file.yanked === 'string' ? escapeHtml(file.yanked) : ''}"` : ''
    return `    <a href="${escapeHtml(href)}"${python}${yanked}>${escapeHtml(file.filename)}</a><br/>`
  })
  return htmlDocument(`Links for ${page.name}`, links)
}

/** The root index: every project name, linking to `simple/{name}/`. */
export function renderRoot(names: string[], baseUrl: string, format: SimpleFormat): string {
  if (format === 'json')
    return JSON.stringify({ meta: { 'api-version': '1.0' }, projects: names.map((name) => ({ name })) })
  return htmlDocument(
    'Simple index',
    names.map(
      (name) =>
        `    <a href="${escapeHtml(`${baseUrl}simple/${normalizePackageName('pypi', name)}/`)}">${escapeHtml(name)}</a><br/>`,
    ),
  )
}

function htmlDocument(title: string, lines: string[]): string {
  return `<!DOCTYPE html>\n<html>\n  <head>\n    <meta name="pypi:repository-version" content="1.0">\n    <title>${escapeHtml(title)}</title>\n  </head>\n  <body>\n    <h1>${escapeHtml(title)}</h1>\n${lines.join('\n')}\n  </body>\n</html>\n`
}
