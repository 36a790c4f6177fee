import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What one webhook's receiver saw: event ids in arrival order and when each arrived. */
export interface HookLog {
  ids: string[]
  /** Date.now() at receipt, per event id (first receipt). */
  at: Map<string, number>
  deliveries: number
}

/**
 * One HTTP receiver for many webhooks (`/hook/<n>`), answering 204 at once and keeping only
 * what the figures need. It does not verify signatures: that is the tests' job.
 */
export class WebhookSink {
  readonly hooks = new Map<string, HookLog>()
  private server: Server | null = null
  url = ''

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const now = Date.now()
        const hook = (req.url ?? '').split('/').pop() ?? ''
        let log = this.hooks.get(hook)
        if (!log) this.hooks.set(hook, (log = { ids: [], at: new Map(), deliveries: 0 }))
        log.deliveries++
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: { id: string }[] }
        for (const { id } of body.events) {
          log.ids.push(id)
          if (!log.at.has(id)) log.at.set(id, now)
        }
        res.writeHead(204).end()
      })
    })
    this.server.keepAliveTimeout = 60_000
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  /** Event deliveries received so far, all webhooks together. */
  received(): number {
    let total = 0
    for (const log of this.hooks.values()) total += log.ids.length
    return total
  }

  reset(): void {
    this.hooks.clear()
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }
}

/**
 * Loss, duplicates and order per webhook against the log order of `expected` (event ids).
 * @example audit(sink, ['0', '1'], ids) // { lost: 0, duplicated: 0, reordered: 0 }
 */
export function audit(
  sink: WebhookSink,
  hooks: string[],
  expected: string[],
): { lost: number; duplicated: number; reordered: number } {
  const position = new Map(expected.map((id, index) => [id, index]))
  let lost = 0
  let duplicated = 0
  let reordered = 0
  for (const hook of hooks) {
    const log = sink.hooks.get(hook) ?? { ids: [], at: new Map(), deliveries: 0 }
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
