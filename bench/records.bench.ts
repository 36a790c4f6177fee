/**
 * Delivery records benchmark: the cost of recording an attempt (record, attempt list, delivery
 * index and the 1m/1h/1d metric buckets, one transaction) for 20 webhooks recording at once on
 * one Redis, for fresh webhooks and for webhooks that have delivered all day (1,440 minute and
 * 720 hour bucket starts in their metric indexes). Prints µs per recorded attempt and the ratio;
 * asserts nothing. Run: npm run bench:records
 */
import { createBackend } from '../storage'
import { WebhookRecordRepository } from '../storage/repositories/webhook-records'
import { webhookKeys } from '../storage/repositories/webhook-keys'
import { redisUrl, uniquePrefix } from '../test/support/redis'

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

async function round(tag: string, dayOld: boolean): Promise<number> {
  const hooks = Array.from({ length: WEBHOOKS }, (_, h) => `${tag}-${h}`)
  if (dayOld)
    for (const id of hooks) {
      await backend.keyValue.set(webhookKeys.metricsIndex('acme', id, '1m'), { starts: starts(1_440, MIN) })
      await backend.keyValue.set(webhookKeys.metricsIndex('acme', id, '1h'), { starts: starts(720, HOUR) })
    }
  const started = performance.now()
  // One attempt in flight per webhook, as the delivery actors record them.
  await Promise.all(
    hooks.map(async (id) => {
      for (let i = 0; i < ATTEMPTS; i++) {
        const deliveryId = `whdel-${String(i).padStart(6, '0')}`
        await records.saveDelivery('acme', id, deliveryId, () => ({ id: deliveryId }) as never, {
          metrics: { at: NOW + i, delta: { deliveriesSuccess: 1, eventsSent: 1 } },
        })
      }
    }),
  )
  return ((performance.now() - started) / (WEBHOOKS * ATTEMPTS)) * 1_000
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const fresh: number[] = []
const dayOld: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  fresh.push(await round(`fresh${r}`, false))
  dayOld.push(await round(`day${r}`, true))
}
console.log(
  `recorded attempt, ${WEBHOOKS} webhooks at once, one Redis (median of ${ROUNDS} rounds of ${ATTEMPTS} each)`,
)
console.log(`  fresh webhooks                      ${median(fresh).toFixed(0)} µs`)
console.log(
  `  webhooks that delivered all day     ${median(dayOld).toFixed(0)} µs   (${(median(dayOld) / median(fresh)).toFixed(2)}x fresh)`,
)
await backend.close()
process.exit(0)
