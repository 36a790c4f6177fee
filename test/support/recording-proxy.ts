import { bodyOf, startLoopback, type Loopback } from './loopback'

/** A loopback tap in front of a real upstream: every request is recorded, then relayed. */
export interface RecordingProxy extends Loopback {
  /** Requests received, in order (method and path with query). */
  requests: { method: string; path: string }[]
}

/**
 * Starts a tap that relays each request to `target` (headers and body as received) and its
 * answer back, so a test can assert what reached the upstream, or that nothing did.
 * @example const tap = await startRecordingProxy(verdaccio.url); tap.requests.filter((r) => r.method === 'PUT')
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordingProxy['requests'] = []
  const loopback = await startLoopback(async (req, res, url) => {
    requests.push({ method: req.method ?? 'GET', path: `${url.pathname}${url.search}` })
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers))
      if (name !== 'host' && name !== 'connection' && typeof value === 'string') headers.set(name, value)
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : new Uint8Array(await bodyOf(req))
    const answer = await fetch(`${target}${url.pathname}${url.search}`, { method: req.method, headers, body })
    const bytes = Buffer.from(await answer.arrayBuffer())
    const out: Record<string, string> = {}
    answer.headers.forEach((value, name) => {
      if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name)) out[name] = value
    })
    res.writeHead(answer.status, { ...out, 'content-length': bytes.length })
    res.end(bytes)
  })
  return { ...loopback, requests }
}
