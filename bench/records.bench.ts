/**
 * Delivery records benchmark: the cost of recording an attempt (record, attempt list, delivery
 * index and the 1m/1h/1d metric buckets, one transaction) for 20 webhooks recording at once on
 * one Redis, for fresh webhooks, for webhooks whose index is full (128 deliveries before: the
 * steady state of a running service) and for webhooks that have delivered all day (1,440 minute
 * and 720 hour bucket starts in their metric indexes). Prints µs per recorded attempt (wall and
 * this process's CPU), the bytes sent to Redis per attempt (exact: Redis's own count) and the
 * ratio; asserts nothing. Run: npm run bench:records
 */
import { createBackend } from '../storage'
import type { RedisBackend } from '../storage/redis-backend'
import { WebhookRecordRepository } from '../storage/repositories/webhook-records'
import { webhookKeys } from '../storage/repositories/webhook-keys'
import { redisUrl, uniquePrefix } from '../test/support/redis'
import { median } from './support/median'

const MIN = 60_000
const HOUR = 60 * MIN
const NOW = Date.UTC(2026, 10, 26, 12)
const WEBHOOKS = 20
const ATTEMPTS = 200
const ROUNDS = 3

const backend = await createBackend({ redisUrl: await redisUrl(), redisPrefix: uniquePrefix('bench-records') })
const records = new WebhookRecordRepository(backend)

/** A day of bucket starts of `size` ms, oldest first, up to NOW. */
const starts = (count: number, size: number) =>
  Array.from({ length: count }, (_, i) => Math.floor(NOW / size) * size - (count - 1 - i) * size)

/** Bytes Redis has read from its clients (INFO stats). */
async function redisInputBytes(): Promise<number> {
  const stats = await (backend as RedisBackend).redis.info('stats')
  return Number(/total_net_input_bytes:(\d+)/.exec(stats)?.[1] ?? NaN)
}

interface Cost {
  wallUs: number
  cpuUs: number
  bytes: number
}

async function record(id: string, i: number): Promise<void> {
  // Shaped as the service makes them (server/common/ids.ts): 31 characters, time-ordered.
  const deliveryId = `whdel-${(NOW + i).toString(36).padStart(9, '0')}${String(i).padStart(16, '0')}`
  await records.saveDelivery('acme', id, deliveryId, () => ({ id: deliveryId }) as never, {
    metrics: { at: NOW + i, delta: { deliveriesSuccess: 1, eventsSent: 1 } },
  })
}

async function round(tag: string, kind: 'fresh' | 'full' | 'day'): Promise<Cost> {
  const hooks = Array.from({ length: WEBHOOKS }, (_, h) => `${tag}-${h}`)
  // A full index: 128 deliveries recorded before the measured ones.
  const before = kind === 'full' ? 128 : 0
  if (before)
    await Promise.all(
      hooks.map(async (id) => {
        for (let i = 0; i < before; i++) await record(id, i)
      }),
    )
  if (kind === 'day')
    for (const id of hooks) {
      await backend.keyValue.set(webhookKeys.metricsIndex('acme', id, '1m'), { starts: starts(1_440, MIN) })
      await backend.keyValue.set(webhookKeys.metricsIndex('acme', id, '1h'), { starts: starts(720, HOUR) })
    }
  const bytesBefore = await redisInputBytes()
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  // One attempt in flight per webhook, as the delivery actors record them.
  await Promise.all(
    hooks.map(async (id) => {
      for (let i = before; i < before + ATTEMPTS; i++) await record(id, i)
    }),
  )
  const wall = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  const bytes = (await redisInputBytes()) - bytesBefore
  const attempts = WEBHOOKS * ATTEMPTS
  return { wallUs: (wall / attempts) * 1_000, cpuUs: (cpu.user + cpu.system) / attempts, bytes: bytes / attempts }
}

const costs: Record<'fresh' | 'full' | 'day', Cost[]> = { fresh: [], full: [], day: [] }
for (let r = 0; r < ROUNDS; r++)
  for (const kind of ['fresh', 'full', 'day'] as const) costs[kind].push(await round(`${kind}${r}`, kind))
const line = (label: string, kind: keyof typeof costs) => {
  const wall = median(costs[kind].map((cost) => cost.wallUs))
  const ratio = wall / median(costs.fresh.map((cost) => cost.wallUs))
  return `  ${label.padEnd(36)}${wall.toFixed(0).padStart(5)} µs   CPU ${median(costs[kind].map((cost) => cost.cpuUs))
    .toFixed(0)
    .padStart(4)} µs   ${median(costs[kind].map((cost) => cost.bytes))
    .toFixed(0)
    .padStart(5)} bytes to Redis   (${ratio.toFixed(2)}x fresh)`
}
console.log(
  `recorded attempt, ${WEBHOOKS} webhooks at once, one Redis (median of ${ROUNDS} rounds of ${ATTEMPTS} each)`,
)
console.log(line('fresh webhooks', 'fresh'))
console.log(line('full index (128 deliveries before)', 'full'))
console.log(line('webhooks that delivered all day', 'day'))
await backend.close()
process.exit(0)
