import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { strToU8, zipSync } from 'fflate'
import { send, startLoopback, type Loopback } from './loopback'

export const OSV_FIXTURES = fileURLToPath(new URL('../fixtures/osv', import.meta.url))

/** The fixture records of one OSV ecosystem directory (`npm`, `PyPI`, `Maven`, `NuGet`). */
export function fixtureRecords(dir: string): Record<string, unknown>[] {
  return readdirSync(join(OSV_FIXTURES, dir))
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(OSV_FIXTURES, dir, name), 'utf8')))
}

/** An all.zip as OSV publishes it: one `{id}.json` per record; `extra` adds raw entries. */
export function osvZip(records: Record<string, unknown>[], extra: Record<string, string> = {}): Uint8Array {
  const files: Record<string, Uint8Array> = {}
  for (const record of records) files[`${record.id}.json`] = strToU8(JSON.stringify(record))
  for (const [name, text] of Object.entries(extra)) files[name] = strToU8(text)
  return zipSync(files)
}

/** A malicious-package report, as OpenSSF publishes them: listed versions, or every version. */
export function malRecord(id: string, ecosystem: string, name: string, versions?: string[]): Record<string, unknown> {
  const type = ecosystem === 'npm' ? 'SEMVER' : 'ECOSYSTEM'
  return {
    id,
    modified: '2025-01-01T00:00:00Z',
    summary: `Malicious code in ${name} (${ecosystem})`,
    affected: [
      versions
        ? { package: { ecosystem, name }, versions }
        : { package: { ecosystem, name }, ranges: [{ type, events: [{ introduced: '0' }] }] },
    ],
  }
}

/** One request the feed received. */
export interface FeedRequest {
  path: string
  ifNoneMatch?: string
  ifModifiedSince?: string
  /** The `Range` asked for, when one was. */
  range?: string
  status: number
}

/**
 * The OSV bucket for tests: `{url}/{ecosystem}/all.zip` per ecosystem, with ETag and Last-Modified,
 * answering 304 to a matching If-None-Match. Archives are replaced (new ETag), damaged or made to
 * fail while the tests run; every request is recorded.
 */
export interface OsvFeed extends Loopback {
  requests: FeedRequest[]
  /** Serves `bytes` as the ecosystem's all.zip from now on. */
  publish(ecosystem: string, bytes: Uint8Array): void
  /** Answers the ecosystem's archive with this status (e.g. 503) until `publish` or `heal`. */
  fail(ecosystem: string, status: number): void
  heal(ecosystem: string): void
  /** How many 200 answers (full downloads) the ecosystem's archive got. */
  downloads(ecosystem: string): number
  /** Bytes sent in 206 answers (ranges) for the ecosystem's archive. */
  rangeBytes(ecosystem: string): number
  /** false: answer every GET whole, as a server without range support does. */
  serveRanges(on: boolean): void
  /** Called with each request as its answer is decided (the archive it gets is already chosen). */
  onRequest(listener: ((request: FeedRequest) => void) | null): void
}

/** The single range `bytes=a-b`, `bytes=a-` or `bytes=-n` of `total` bytes, as [start, end] inclusive. */
function parseRange(header: string, total: number): [number, number] | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!match || (match[1] === '' && match[2] === '')) return null
  if (match[1] === '') return [Math.max(0, total - Number(match[2])), total - 1]
  const start = Number(match[1])
  const end = match[2] === '' ? total - 1 : Math.min(Number(match[2]), total - 1)
  return start <= end ? [start, end] : null
}

export async function startOsvFeed(initial: Record<string, Uint8Array> = {}): Promise<OsvFeed> {
  const archives = new Map<string, { bytes: Buffer; etag: string; lastModified: string }>()
  const failing = new Map<string, number>()
  const requests: FeedRequest[] = []
  const sentInRanges = new Map<string, number>()
  let ranges = true
  let listener: ((request: FeedRequest) => void) | null = null
  let version = 0
  const publish = (ecosystem: string, bytes: Uint8Array) => {
    failing.delete(ecosystem)
    // Time moves on with every publication, so If-Modified-Since alone would also see the change.
    const lastModified = new Date(Date.UTC(2025, 0, 1) + ++version * 60_000).toUTCString()
    const etag = `"${createHash('sha1').update(bytes).digest('hex')}"`
    // A Buffer view, not a copy: serving a 60 MB archive must not stall the process it shares.
    archives.set(ecosystem, {
      bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      etag,
      lastModified,
    })
  }
  for (const [ecosystem, bytes] of Object.entries(initial)) publish(ecosystem, bytes)
  const loopback = await startLoopback((req, res, url) => {
    const match = /^\/([^/]+)\/all\.zip$/.exec(url.pathname)
    const ecosystem = match ? decodeURIComponent(match[1]) : ''
    const record = (status: number) => {
      requests.push({
        path: url.pathname,
        status,
        ...(req.headers['if-none-match'] ? { ifNoneMatch: String(req.headers['if-none-match']) } : {}),
        ...(req.headers['if-modified-since'] ? { ifModifiedSince: String(req.headers['if-modified-since']) } : {}),
        ...(req.headers.range ? { range: String(req.headers.range) } : {}),
      })
      listener?.(requests.at(-1)!)
    }
    const status = failing.get(ecosystem)
    if (status) return (record(status), send(res, status, 'unavailable'))
    const archive = archives.get(ecosystem)
    if (!archive) return (record(404), send(res, 404, 'NoSuchKey'))
    if (req.headers['if-none-match'] === archive.etag) {
      record(304)
      res.writeHead(304, { etag: archive.etag })
      res.end()
      return
    }
    const ifMatch = req.headers['if-match']
    if (ifMatch && ifMatch !== archive.etag) return (record(412), send(res, 412, 'PreconditionFailed'))
    const headers = { etag: archive.etag, 'last-modified': archive.lastModified }
    const range = ranges && req.headers.range ? parseRange(req.headers.range, archive.bytes.length) : null
    if (range) {
      record(206)
      const [start, end] = range
      sentInRanges.set(ecosystem, (sentInRanges.get(ecosystem) ?? 0) + end + 1 - start)
      const part = { ...headers, 'content-range': `bytes ${start}-${end}/${archive.bytes.length}` }
      return send(res, 206, archive.bytes.subarray(start, end + 1), 'application/zip', part)
    }
    record(200)
    send(res, 200, archive.bytes, 'application/zip', headers)
  })
  return {
    ...loopback,
    requests,
    publish,
    fail: (ecosystem, status) => void failing.set(ecosystem, status),
    heal: (ecosystem) => void failing.delete(ecosystem),
    downloads: (ecosystem) => requests.filter((r) => r.path === `/${ecosystem}/all.zip` && r.status === 200).length,
    rangeBytes: (ecosystem) => sentInRanges.get(ecosystem) ?? 0,
    serveRanges: (on) => void (ranges = on),
    onRequest: (next) => void (listener = next),
  }
}
