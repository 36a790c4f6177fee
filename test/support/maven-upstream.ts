import { basicPassword, bodyOf, send, startLoopback, type Loopback } from './loopback'

/** A Maven repository for tests: GET serves what PUT stored (with Last-Modified). */
export interface MavenUpstream extends Loopback {
  files: Map<string, { bytes: Buffer; modified: Date }>
  /** Paths PUT, in order. */
  puts: string[]
  /** Paths requested with GET, in order. */
  gets: string[]
}

/** Starts the repository; with `password`, PUT needs Basic auth with that password. */
export async function startMavenUpstream(options: { password?: string } = {}): Promise<MavenUpstream> {
  const files = new Map<string, { bytes: Buffer; modified: Date }>()
  const puts: string[] = []
  const gets: string[] = []
  const loopback = await startLoopback(async (req, res, url) => {
    const path = decodeURIComponent(url.pathname).replace(/^\/+/, '')
    if (req.method === 'PUT') {
      if (options.password && basicPassword(req) !== options.password)
        return send(res, 401, '', 'text/plain', { 'www-authenticate': 'Basic realm="maven"' })
      files.set(path, { bytes: await bodyOf(req), modified: new Date() })
      puts.push(path)
      return send(res, 201)
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      gets.push(path)
      const file = files.get(path)
      if (!file) return send(res, 404, 'not found')
      return send(
        res,
        200,
        file.bytes,
        path.endsWith('.xml') || path.endsWith('.pom') ? 'application/xml' : 'application/octet-stream',
        { 'last-modified': file.modified.toUTCString() },
      )
    }
    send(res, 405)
  })
  return { ...loopback, files, puts, gets }
}
