/**
 * Webhook engine benchmark, in-process on Redis with a local receiver. Prints figures, asserts nothing.
 *   npx tsx bench/webhooks.bench.ts   (npm run bench:webhooks)
 * 1. 100 webhooks sharing 50,000 events (500 each, appended at once): events/s delivered,
 *    p50/p99 latency from append to receipt, events lost and duplicated.
 * 2. One webhook with a full backlog: sustained events/s against the 500 events/s pacing ceiling.
 * 3. Time to restore 1,000 persisted webhook actors in a fresh engine.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createBackend, type Backend } from '../storage'
import { createServices, type Services } from '../server/app/services'
import { makeEvent } from '../server/events/factory'
import { systemClock } from '../server/common/clock'
import { createWebhookRuntime, type WebhookRuntime } from '../server/webhooks/delivery/runtime'
import { parseWebhookSettings } from '../server/webhooks/configuration/settings'
import { generateSecret } from '../server/webhooks/protocol/signing'
import { startWebhookEngine } from '../server/webhooks/delivery/engine'
import type { WebhookRecord } from '../server/webhooks/configuration/model'
import { redisUrl, uniquePrefix } from '../test/support/redis'

process.env.LOG_LEVEL = 'error'
const NS = 'bench'

interface Receipt {
  at: number
  ids: string[]
  deliveryId: string
}

async function receiver(): Promise<{ url: string; receipts: Receipt[]; server: Server }> {
  const receipts: Receipt[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: { id: string }[] }
      receipts.push({ at: performance.now(), ids: body.events.map((e) => e.id), deliveryId: String(req.headers['webhook-id']) })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, receipts, server }
}

async function setup(): Promise<{ backend: Backend; services: Services; runtime: WebhookRuntime }> {
  const backend = createBackend({ redisUrl: await redisUrl(), redisPrefix: uniquePrefix('bench-wh') })
  const services = createServices(backend)
  const runtime = createWebhookRuntime(services, parseWebhookSettings({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' }))
  return { backend, services, runtime }
}

/** Webhooks straight into the repository (the API's validation is not what is measured). */
async function createWebhooks(services: Services, count: number, url: string, eventTypes: (i: number) => string[]): Promise<void> {
  const now = new Date(Date.now() - 1_000).toISOString()
  const { webhooks } = services
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, k) => {
        const id = `wh-${i + k}`
        const record: WebhookRecord = { id, namespace: NS, name: id, url, enabled: true, eventTypes: eventTypes(i + k), firewalls: [], secret: generateSecret(), createdAt: now, updatedAt: now }
        return webhooks.mutate(NS, id, () => ({ next: record, result: undefined }))
      }),
    )
  }
}

async function append(backend: Backend, types: string[], appendedAt: Map<string, number>): Promise<void> {
  for (let i = 0; i < types.length; i += 1_000) {
    const events = types.slice(i, i + 1_000).map((type) => makeEvent(systemClock, NS, type as `audit.${string}`, { action: type.slice(6), outcome: 'success', statusCode: 200 }))
    const at = performance.now()
    for (const event of events) appendedAt.set(event.id, at)
    await backend.transact([], () => ({ writes: { events }, result: undefined }))
  }
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 20))
  }
  return true
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

async function fanOut(): Promise<void> {
  const { backend, services, runtime } = await setup()
  const sink = await receiver()
  await createWebhooks(services, 100, sink.url, (i) => [`audit.bench.w${i}.*`])
  const engine = await startWebhookEngine(services, runtime)
  const appendedAt = new Map<string, number>()
  const started = performance.now()
  await append(backend, Array.from({ length: 50_000 }, (_, i) => `audit.bench.w${i % 100}.ping`), appendedAt)
  const done = await until(() => new Set(sink.receipts.flatMap((r) => r.ids)).size >= 50_000, 180_000)
  const elapsed = (Math.max(...sink.receipts.map((r) => r.at)) - started) / 1000
  const seen = new Map<string, number>()
  for (const receipt of sink.receipts) for (const id of receipt.ids) seen.set(id, (seen.get(id) ?? 0) + 1)
  const latencies = [...appendedAt].filter(([id]) => seen.has(id)).map(([id]) => sink.receipts.find((r) => r.ids.includes(id))!.at - appendedAt.get(id)!)
  latencies.sort((a, b) => a - b)
  const lost = [...appendedAt.keys()].filter((id) => !seen.has(id)).length
  const duplicates = [...seen.values()].filter((n) => n > 1).length
  console.log('\n1. 100 webhooks sharing 50,000 events (500 each, Redis, local receiver)' + (done ? '' : '  [timed out after 180 s]'))
  console.log(`   delivered          ${(seen.size / elapsed).toFixed(0)} events/s (${seen.size} events in ${elapsed.toFixed(2)} s, ${sink.receipts.length} deliveries)`)
  console.log(`   append -> receipt  p50 ${percentile(latencies, 50).toFixed(0)} ms   p99 ${percentile(latencies, 99).toFixed(0)} ms`)
  console.log(`   lost ${lost}   duplicated ${duplicates}`)
  await engine.stop()
  sink.server.close()
  await backend.close()
}

async function sustained(): Promise<void> {
  const { backend, services, runtime } = await setup()
  const sink = await receiver()
  await createWebhooks(services, 1, sink.url, () => ['audit.bench.*'])
  const engine = await startWebhookEngine(services, runtime)
  await append(backend, Array.from({ length: 5_000 }, () => 'audit.bench.ping'), new Map())
  await until(() => sink.receipts.reduce((n, r) => n + r.ids.length, 0) >= 5_000, 60_000)
  // The first five go out at once (the window is empty); the steady state is what follows.
  const steady = sink.receipts.slice(5)
  const events = steady.reduce((n, r) => n + r.ids.length, 0)
  const seconds = (steady.at(-1)!.at - sink.receipts[4].at) / 1000
  const rate = events / seconds
  console.log('\n2. One webhook, 5,000-event backlog, pacing at 5 deliveries/s x 100 events')
  console.log(`   sustained          ${rate.toFixed(0)} events/s = ${((rate / 500) * 100).toFixed(1)}% of the 500 events/s ceiling (${steady.length} deliveries over ${seconds.toFixed(2)} s)`)
  await engine.stop()
  sink.server.close()
  await backend.close()
}

async function restore(): Promise<void> {
  const { backend, services, runtime } = await setup()
  const sink = await receiver()
  await createWebhooks(services, 1_000, sink.url, () => ['audit.bench.*'])
  const first = await startWebhookEngine(services, runtime)
  await first.idle()
  await first.stop()
  const started = performance.now()
  const second = await startWebhookEngine(services, runtime)
  const millis = performance.now() - started
  console.log('\n3. Restore 1,000 persisted webhook actors (Redis)')
  console.log(`   restored ${second.host.owned().length} actors in ${millis.toFixed(0)} ms (leases, snapshots, actor start)`)
  await second.stop()
  sink.server.close()
  await backend.close()
}

async function main() {
  await fanOut()
  await sustained()
  await restore()
  console.log('')
  process.exit(0)
}

void main().catch((error) => {
  console.error(error)
  process.exit(1)
})
