import { afterEach, describe, expect, it } from 'vitest'
import { createServices, type Services } from '../../server/app/services'
import { configFromEnv } from '../../server/app/config'
import { RetentionWorker } from '../../server/observability/retention'
import { metricCutoffs, pruneMetricBuckets } from '../../server/webhooks/delivery/metric-retention'
import type { WebhookRecord } from '../../server/webhooks/configuration/model'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import type { Backend } from '../../storage'
import { BACKEND_KINDS, makeBackend } from '../support/backends'

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
/** Midnight UTC, so day, hour and minute buckets all start here. */
const NOW = Date.UTC(2026, 10, 24)

const settable = (at: number) => ({
  at,
  now() {
    return this.at
  },
})
const webhook = (id: string): WebhookRecord => ({
  id,
  namespace: 'acme',
  name: id,
  url: 'https://hooks.example/x',
  enabled: true,
  eventTypes: ['config.*'],
  firewalls: [],
  secret: 'whsec_x',
  createdAt: 't',
  updatedAt: 't',
})

const open: Backend[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((backend) => backend.close()))
})

describe('metric bucket windows', () => {
  it('keeps 1m buckets a day, 1h buckets 30 days and 1d buckets LOG_RETENTION', () => {
    expect(metricCutoffs(NOW, 90 * DAY)).toEqual({ '1m': NOW - DAY, '1h': NOW - 30 * DAY, '1d': NOW - 90 * DAY })
  })
})

describe.each(BACKEND_KINDS)('metric buckets removed by the retention pass (%s)', (kind) => {
  async function setup(): Promise<{ backend: Backend; services: Services }> {
    const backend = await makeBackend(kind)
    open.push(backend)
    const services = createServices(backend, { config: configFromEnv({}) })
    for (const id of ['wh-a', 'wh-b'])
      await services.webhooks.mutate('acme', id, () => ({ next: webhook(id), result: undefined }))
    return { backend, services }
  }
  const stored = (backend: Backend, id: string, size: string, start: number) =>
    backend.keyValue.get(webhookKeys.metrics('acme', id, size, start))

  it('removes each size past its window and keeps the rest, for every webhook', async () => {
    const { backend, services } = await setup()
    const records = services.webhookRecords
    // Attempts 2 days, 40 days and 100 days ago, and one just now.
    for (const at of [NOW - 2 * DAY, NOW - 40 * DAY, NOW - 100 * DAY, NOW]) {
      for (const id of ['wh-a', 'wh-b'])
        await records.addMetrics('acme', id, at, { deliveriesSuccess: 1, eventsSent: 2 })
    }
    const clock = settable(NOW + MIN)
    const worker = new RetentionWorker({
      logs: services.retainedLogs,
      clock,
      retentionMs: 90 * DAY,
      intervalMs: MIN,
      owner: 'w1',
      prune: { webhookMetricBuckets: (now) => pruneMetricBuckets(services.webhooks, records, now, 90 * DAY) },
    })
    const report = await worker.runOnce()
    // Per webhook: three 1m buckets (2, 40 and 100 days old), two 1h buckets (40 and 100), one 1d bucket (100).
    expect(report!.pruned).toEqual({ webhookMetricBuckets: 2 * (3 + 2 + 1) })
    for (const id of ['wh-a', 'wh-b']) {
      expect(await stored(backend, id, '1m', NOW - 2 * DAY)).toBeNull()
      expect(await stored(backend, id, '1m', NOW)).not.toBeNull()
      expect(await stored(backend, id, '1h', NOW - 2 * DAY)).not.toBeNull()
      expect(await stored(backend, id, '1h', NOW - 40 * DAY)).toBeNull()
      expect(await stored(backend, id, '1d', NOW - 40 * DAY)).not.toBeNull()
      expect(await stored(backend, id, '1d', NOW - 100 * DAY)).toBeNull()
    }
    const [daily] = await records.metrics('acme', 'wh-a', '1d', NOW - 40 * DAY, NOW - 40 * DAY)
    expect(daily.counters.eventsSent).toBe(2)
    expect((await worker.runOnce())!.pruned).toEqual({ webhookMetricBuckets: 0 })
    await worker.stop()
  })

  it('removes every bucket of a deleted webhook', async () => {
    const { backend, services } = await setup()
    await services.webhookRecords.addMetrics('acme', 'wh-a', NOW, { deliveriesFailed: 1 })
    await services.webhookRecords.addMetrics('acme', 'wh-a', NOW - 3 * DAY, { deliveriesFailed: 1 })
    await services.webhookRecords.deleteMetrics('acme', 'wh-a')
    for (const [size, start] of [
      ['1m', NOW],
      ['1h', NOW],
      ['1d', NOW],
      ['1d', NOW - 3 * DAY],
    ] as const)
      expect(await stored(backend, 'wh-a', size, start)).toBeNull()
    expect(await backend.keyValue.get(webhookKeys.metricsIndex('acme', 'wh-a', '1d'))).toBeNull()
  })
})
