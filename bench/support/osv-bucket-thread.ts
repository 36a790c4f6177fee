import { Worker } from 'node:worker_threads'

/**
 * The OSV bucket for benchmarks, on a thread of its own: `{url}/{ecosystem}/all.zip` with an ETag,
 * 304 to a matching If-None-Match, single ranges (206) and If-Match, as a storage bucket answers.
 * Serving a 63 MB archive on the thread that also runs the service under test would count as the
 * service's own work (in production the bucket is remote).
 */
export interface BucketThread {
  url: string
  /** Serves `bytes` (handed over, not copied) as the ecosystem's all.zip from now on. */
  publish(ecosystem: string, bytes: Uint8Array): Promise<void>
  close(): Promise<void>
}

const SERVER = `
const { createServer } = require('node:http')
const { createHash } = require('node:crypto')
const { parentPort } = require('node:worker_threads')
const archives = new Map()
parentPort.on('message', ({ ecosystem, bytes }) => {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  archives.set(ecosystem, { body, etag: '"' + createHash('sha1').update(body).digest('hex') + '"' })
  parentPort.postMessage('published')
})
const server = createServer((req, res) => {
  const match = /^\\/([^/]+)\\/all\\.zip$/.exec(req.url)
  const archive = match && archives.get(decodeURIComponent(match[1]))
  if (!archive) return res.writeHead(404).end('NoSuchKey')
  if (req.headers['if-none-match'] === archive.etag) return res.writeHead(304, { etag: archive.etag }).end()
  if (req.headers['if-match'] && req.headers['if-match'] !== archive.etag) return res.writeHead(412).end()
  const total = archive.body.length
  const range = /^bytes=(\\d*)-(\\d*)$/.exec(req.headers.range || '')
  if (range && (range[1] || range[2])) {
    const start = range[1] ? Number(range[1]) : Math.max(0, total - Number(range[2]))
    const end = range[1] && range[2] ? Math.min(Number(range[2]), total - 1) : total - 1
    const part = archive.body.subarray(start, end + 1)
    const headers = { etag: archive.etag, 'content-range': 'bytes ' + start + '-' + end + '/' + total }
    res.writeHead(206, { 'content-type': 'application/zip', 'content-length': part.length, ...headers })
    return res.end(part)
  }
  res.writeHead(200, { 'content-type': 'application/zip', etag: archive.etag, 'content-length': total })
  res.end(archive.body)
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port))
`

export async function startBucketThread(): Promise<BucketThread> {
  const worker = new Worker(SERVER, { eval: true })
  const reply = () => new Promise<unknown>((resolve) => worker.once('message', resolve))
  const port = await reply()
  return {
    url: `http://127.0.0.1:${port}`,
    async publish(ecosystem, bytes) {
      const answered = reply()
      worker.postMessage({ ecosystem, bytes }, [bytes.buffer as ArrayBuffer])
      await answered
    },
    async close() {
      await worker.terminate()
    },
  }
}
