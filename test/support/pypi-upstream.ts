import { createHash } from 'node:crypto'
import { basicPassword, bodyOf, send, startLoopback, type Loopback } from './loopback'

interface StoredFile {
  project: string
  filename: string
  bytes: Buffer
  uploadTime: string
}

/** A PyPI-style index for tests: PEP 691 JSON / PEP 503 HTML, files, and twine uploads at `/`. */
export interface PypiUpstream extends Loopback {
  add(project: string, filename: string, bytes: Buffer, uploadTime?: string): void
  /** Sets what the JSON API (`pypi/{project}/{version}/json`) answers as the release's `info`. */
  setInfo(project: string, version: string, info: Record<string, unknown>): void
  /** Uploads received, in order: the form fields and the file name. */
  uploads: { fields: Record<string, string>; filename: string }[]
}

const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-')
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/**
 * Starts the index. With `password`, uploads need Basic auth with that password (as
 * pypiserver/devpi do); reads are open.
 */
export async function startPypiUpstream(options: { password?: string } = {}): Promise<PypiUpstream> {
  const files: StoredFile[] = []
  const uploads: PypiUpstream['uploads'] = []
  const infos = new Map<string, Record<string, unknown>>()
  const loopback = await startLoopback(async (req, res, url) => {
    const path = url.pathname
    if (req.method === 'POST' && (path === '/' || path === '/legacy/')) {
      if (options.password && basicPassword(req) !== options.password)
        return send(res, 401, 'unauthorized', 'text/plain', { 'www-authenticate': 'Basic realm="pypi"' })
      const form = await new Response(new Uint8Array(await bodyOf(req)), {
        headers: { 'content-type': req.headers['content-type']! },
      }).formData()
      const fields: Record<string, string> = {}
      let filename = ''
      for (const [key, value] of form.entries()) {
        if (typeof value === 'string') fields[key] = value
        else {
          filename = (value as File).name
          files.push({
            project: normalize(fields.name ?? String(form.get('name'))),
            filename,
            bytes: Buffer.from(await (value as File).arrayBuffer()),
            uploadTime: new Date().toISOString(),
          })
        }
      }
      uploads.push({ fields, filename })
      return send(res, 200, 'OK')
    }
    const project = /^\/simple\/([^/]+)\/$/.exec(path)?.[1]
    if (req.method === 'GET' && project) {
      const own = files.filter((f) => f.project === normalize(project))
      if (own.length === 0) return send(res, 404, 'not found')
      if (String(req.headers.accept).includes('application/vnd.pypi.simple.v1+json')) {
        const doc = {
          meta: { 'api-version': '1.1' },
          name: project,
          files: own.map((f) => ({
            filename: f.filename,
            url: `../../files/${f.filename}`,
            hashes: { sha256: sha256(f.bytes) },
            'upload-time': f.uploadTime,
            size: f.bytes.length,
          })),
          versions: [],
        }
        return send(res, 200, JSON.stringify(doc), 'application/vnd.pypi.simple.v1+json')
      }
      const links = own
        .map((f) => `<a href="/files/${f.filename}#sha256=${sha256(f.bytes)}">${f.filename}</a>`)
        .join('\n')
      return send(res, 200, `<html><body>${links}</body></html>`, 'text/html')
    }
    if (req.method === 'GET' && path === '/simple/') {
      const names = [...new Set(files.map((f) => f.project))]
      return send(
        res,
        200,
        `<html><body>${names.map((n) => `<a href="/simple/${n}/">${n}</a>`).join('\n')}</body></html>`,
        'text/html',
      )
    }
    const release = /^\/pypi\/([^/]+)\/([^/]+)\/json$/.exec(path)
    const info = release && infos.get(`${normalize(release[1])}/${release[2]}`)
    if (req.method === 'GET' && info) return send(res, 200, JSON.stringify({ info }), 'application/json')
    const file = files.find((f) => path === `/files/${f.filename}`)
    if (req.method === 'GET' && file) return send(res, 200, file.bytes, 'application/octet-stream')
    send(res, 404, 'not found')
  })
  return {
    ...loopback,
    uploads,
    setInfo: (project, version, info) => infos.set(`${normalize(project)}/${version}`, info),
    add: (project, filename, bytes, uploadTime = '2020-01-01T00:00:00Z') =>
      files.push({ project: normalize(project), filename, bytes, uploadTime }),
  }
}
