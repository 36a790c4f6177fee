import { Worker } from 'node:worker_threads'

/** What one webhook's receiver saw: event ids in arrival order and when each arrived. */
export interface HookLog {
  ids: string[]
  /** Date.now() at receipt, per event id (first receipt). */
  at: Map<string, number>
  deliveries: number
  /** Events the service said it dropped for this webhook (its buffer-overflow notices, added up). */
  dropped: number
}

/**
 * The receiver, run on a thread of its own (see WebhookSink). It finds each event's id and type in
 * the body's bytes instead of parsing the whole body: it shares the machine's two cores with the
 * service, and `JSON.parse` of every 100-event body (with its UTF-8 decoding) took it about 2 ms
 * a body, three quarters of a core at 28,000 event-deliveries/s, more than the service could
 * spare (docs/performance.md, session 25). An event of the envelope starts `{"id":"evt-` (the
 * service writes the id first; no event's data holds an object whose id is an event id) and its
 * own `"type"` is the next one after it. Every SAMPLE_EVERY-th body, and any body with an overflow
 * notice (whose data is needed), is parsed whole as well; a scan that disagrees with the parse
 * ends the thread with an error, and the benchmark with it. A body the scan cannot follow is parsed
 * whole (the scan never loops on it).
 */
const RECEIVER = `
const { createServer } = require('node:http')
const { createServer: createNetServer } = require('node:net')
const { parentPort, workerData } = require('node:worker_threads')
const received = new Int32Array(workerData.received)
const EVENT = Buffer.from('{"id":"evt-')
const ID_AT = '{"id":"'.length
const TYPE = Buffer.from('"type":"')
const NOTICE = Buffer.from('"webhook.rate_limited"')
const QUOTE = 0x22
const SAMPLE_EVERY = 64
let bodies = 0
function scan(body) {
  const events = []
  for (let at = body.indexOf(EVENT); at !== -1; ) {
    const idEnd = body.indexOf(QUOTE, at + ID_AT)
    const typeAt = idEnd === -1 ? -1 : body.indexOf(TYPE, idEnd)
    const typeEnd = typeAt === -1 ? -1 : body.indexOf(QUOTE, typeAt + TYPE.length)
    // Not the shape the service writes: the caller parses the body whole instead.
    if (typeEnd === -1) return null
    events.push({ id: body.latin1Slice(at + ID_AT, idEnd), type: body.latin1Slice(typeAt + TYPE.length, typeEnd) })
    at = body.indexOf(EVENT, typeEnd)
  }
  return events
}
function parsed(body, scanned) {
  const events = JSON.parse(body.toString('utf8')).events
  if (scanned === null) return events
  const same = events.length === scanned.length && events.every((event, i) => event.id === scanned[i].id && event.type === scanned[i].type)
  if (!same) throw new Error('receiver: the scan of a body disagrees with its parse')
  return events
}
let hooks = new Map()
/** One delivery received whole: \`hook\` from its path, \`body\` its bytes. */
function receive(hook, body) {
  const now = Date.now()
  let log = hooks.get(hook)
  if (!log) hooks.set(hook, (log = { ids: [], at: new Map(), deliveries: 0, dropped: 0 }))
  log.deliveries++
  let events = scan(body)
  if (events === null || ++bodies % SAMPLE_EVERY === 0 || body.includes(NOTICE)) events = parsed(body, events)
  for (const { id, type, data } of events) {
    if (type === 'webhook.rate_limited' && data.reason === 'buffer_overflow') log.dropped += data.droppedEvents
    log.ids.push(id)
    if (!log.at.has(id)) log.at.set(id, now)
  }
  Atomics.add(received, 0, events.length)
}
const hookOf = (url) => (url || '').split('/').pop() || ''
/** node:http, answering each request once its body is in. */
function httpReceiver() {
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      receive(hookOf(req.url), Buffer.concat(chunks))
      res.writeHead(204).end()
    })
  })
  server.keepAliveTimeout = 60000
  return server
}
const NO_CONTENT = Buffer.from('HTTP/1.1 204 No Content\\r\\nConnection: keep-alive\\r\\n\\r\\n')
const HEAD_END = Buffer.from('\\r\\n\\r\\n')
const CONTENT_LENGTH = /\\r\\ncontent-length: *(\\d+)\\r\\n/i
/**
 * HTTP/1.1 read straight off the socket: only what the service sends (POST, a Content-Length
 * body, no chunked encoding). Anything else ends the thread with an error, and the benchmark with
 * it, rather than be half read.
 */
function rawReceiver() {
  return createNetServer((socket) => {
    socket.setNoDelay(true)
    let pending = null
    socket.on('data', (chunk) => {
      pending = pending === null ? chunk : Buffer.concat([pending, chunk])
      for (;;) {
        const headEnd = pending.indexOf(HEAD_END)
        if (headEnd === -1) {
          if (pending.length > 65536) throw new Error('receiver: a request head over 64 KB')
          return
        }
        const head = pending.latin1Slice(0, headEnd + 2)
        const lineEnd = head.indexOf('\\r\\n')
        const [method, url] = head.slice(0, lineEnd).split(' ')
        const length = CONTENT_LENGTH.exec(head)
        if (method !== 'POST' || length === null || /\\r\\ntransfer-encoding:/i.test(head))
          throw new Error('receiver: not a POST with a Content-Length: ' + head.slice(0, lineEnd))
        const end = headEnd + 4 + Number(length[1])
        if (pending.length < end) return
        receive(hookOf(url), pending.subarray(headEnd + 4, end))
        socket.write(NO_CONTENT)
        pending = pending.length === end ? null : pending.subarray(end)
        if (pending === null) return
      }
    })
    socket.on('error', () => undefined)
  })
}
const server = workerData.kind === 'http' ? httpReceiver() : rawReceiver()
parentPort.on('message', (message) => {
  if (message === 'collect') parentPort.postMessage(hooks)
  if (message === 'reset') {
    hooks = new Map()
    Atomics.store(received, 0, 0)
    parentPort.postMessage('reset')
  }
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port))
`

/**
 * One HTTP receiver for many webhooks (`/hook/<n>`), answering 204 at once and keeping only
 * what the figures need. It does not verify signatures: that is the tests' job.
 * It runs on a worker thread: on the benchmark's own thread, a receipt's timestamp waited for the
 * producer's work and for collecting the million receipts of the fan-out, none of it the service's.
 * It reads HTTP/1.1 straight off the socket (`rawReceiver`); BENCH_RECEIVER=http uses node:http
 * instead. One thread stands in for 100 receivers on other machines, so one event's 100 requests
 * queue behind each other in it: through node:http its last receipt of an event came 3-5 ms (median)
 * and up to 22 ms after the service wrote the last request, off the socket 1-4 ms and at most 6 ms
 * (light load, socket writes stamped in the service, docs/performance.md, session 28).
 */
const RECEIVER_KIND = process.env.BENCH_RECEIVER === 'http' ? 'http' : 'raw'

export class WebhookSink {
  private worker: Worker | null = null
  private readonly counter = new Int32Array(new SharedArrayBuffer(4))
  url = ''

  async start(): Promise<this> {
    this.worker = new Worker(RECEIVER, {
      eval: true,
      workerData: { received: this.counter.buffer, kind: RECEIVER_KIND },
    })
    const port = await this.reply<number>()
    this.url = `http://127.0.0.1:${port}`
    return this
  }

  /** Event deliveries received so far, all webhooks together. */
  received(): number {
    return Atomics.load(this.counter, 0)
  }

  /** What every webhook's receiver saw so far, by hook name. */
  async collect(): Promise<Map<string, HookLog>> {
    const answer = this.reply<Map<string, HookLog>>()
    this.worker!.postMessage('collect')
    return answer
  }

  async reset(): Promise<void> {
    const answer = this.reply<string>()
    this.worker!.postMessage('reset')
    await answer
  }

  async stop(): Promise<void> {
    await this.worker?.terminate()
  }

  private reply<T>(): Promise<T> {
    return new Promise<T>((resolve) => this.worker!.once('message', resolve))
  }
}

/**
 * Loss, duplicates and order per webhook against the log order of `expected` (event ids).
 * @example audit(await sink.collect(), ['0', '1'], ids) // { lost: 0, duplicated: 0, reordered: 0 }
 */
export function audit(
  received: Map<string, HookLog>,
  hooks: string[],
  expected: string[],
): { lost: number; duplicated: number; reordered: number } {
  const position = new Map(expected.map((id, index) => [id, index]))
  let lost = 0
  let duplicated = 0
  let reordered = 0
  for (const hook of hooks) {
    const log = received.get(hook) ?? { ids: [], at: new Map(), deliveries: 0, dropped: 0 }
    const seen = new Set<string>()
    let last = -1
    for (const id of log.ids) {
      if (!position.has(id)) continue
      if (seen.has(id)) {
        duplicated++
        continue
      }
      seen.add(id)
      const index = position.get(id)!
      if (index < last) reordered++
      last = Math.max(last, index)
    }
    lost += expected.filter((id) => !seen.has(id)).length
  }
  return { lost, duplicated, reordered }
}

export const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN
