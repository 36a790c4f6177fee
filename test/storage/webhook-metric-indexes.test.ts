import { afterEach, describe, expect, it } from 'vitest'
import { bucketStart, WebhookRecordRepository } from '../../storage/repositories/webhook-records'
import { MetricBucketWriter } from '../../storage/repositories/metric-buckets'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import type { BucketSize } from '../../server/webhooks/delivery/record'
import type { Backend, KeyValueStore } from '../../storage'
import { BACKEND_KINDS, makeBackend } from '../support/backends'

const MIN = 60_000
/** Midnight UTC plus five minutes. */
const AT = Date.UTC(2026, 10, 24) + 5 * MIN
const SIZES: BucketSize[] = ['1m', '1h', '1d']
const indexKey = (size: BucketSize) => webhookKeys.metricsIndex('acme', 'wh-a', size)

const open: Backend[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((backend) => backend.close()))
})

describe.each(BACKEND_KINDS)('metric bucket indexes (%s)', (kind) => {
  /** A real backend whose transactions note the keys they read. */
  async function watchedBackend(): Promise<{ backend: Backend; reads: string[][] }> {
    const backend = await makeBackend(kind)
    open.push(backend)
    const reads: string[][] = []
    const transact = backend.keyValue.transact.bind(backend.keyValue)
    backend.keyValue.transact = ((keys, body, options) => {
      reads.push([...keys])
      return transact(keys, body, options)
    }) as KeyValueStore['transact']
    return { backend, reads }
  }

  it("reads a bucket's index only for the bucket's first write", async () => {
    const { backend, reads } = await watchedBackend()
    const records = new WebhookRecordRepository(backend)
    await records.addMetrics('acme', 'wh-a', AT, { deliveriesSuccess: 1 })
    await records.addMetrics('acme', 'wh-a', AT + 1_000, { deliveriesSuccess: 2 })
    expect(SIZES.every((size) => reads[0].includes(indexKey(size)))).toBe(true)
    // A day of minute starts is about 20 KB: every attempt read it before.
    expect(reads[1].filter((key) => SIZES.map(indexKey).includes(key))).toEqual([])
    const [minute] = await records.metrics('acme', 'wh-a', '1m', AT, AT)
    expect(minute.counters.deliveriesSuccess).toBe(3)
    for (const size of SIZES)
      expect(await backend.keyValue.get(indexKey(size))).toEqual({ starts: [bucketStart(AT, size)] })
  })

  it('enters a bucket removed meanwhile (by another process) in its index again', async () => {
    const { backend } = await watchedBackend()
    const records = new WebhookRecordRepository(backend)
    await records.addMetrics('acme', 'wh-a', AT, { deliveriesSuccess: 1 })
    await new WebhookRecordRepository(backend).deleteMetrics('acme', 'wh-a')
    await records.saveDelivery('acme', 'wh-a', 'whdel-1', () => ({ id: 'whdel-1' }) as never, {
      metrics: { at: AT + 1_000, delta: { deliveriesSuccess: 4 } },
    })
    for (const size of SIZES)
      expect(await backend.keyValue.get(indexKey(size))).toEqual({ starts: [bucketStart(AT, size)] })
    const [minute] = await records.metrics('acme', 'wh-a', '1m', AT, AT)
    expect(minute.counters.deliveriesSuccess).toBe(4)
    // Indexed, so the retention pass finds and removes it.
    await records.deleteMetrics('acme', 'wh-a')
    expect((await records.metrics('acme', 'wh-a', '1m', AT, AT))[0].counters.deliveriesSuccess).toBe(0)
  })
})

describe('metric index cache', () => {
  it('remembers at most its bound of index keys, however many webhooks write', async () => {
    const writer = new MetricBucketWriter(90)
    // 100 webhooks x 3 bucket sizes = 300 index keys through a writer bounded at 90.
    for (let i = 0; i < 100; i++) {
      const buckets = writer.buckets('acme', `wh-${i}`, AT)
      await writer.run(buckets, async () => undefined)
    }
    expect(writer.remembered()).toBe(90)
    // A forgotten webhook's next write reads its indexes again (correct, one read dearer).
    const first = writer.buckets('acme', 'wh-0', AT)
    const read: string[][] = []
    await writer.run(first, async (metricKeys) => void read.push(metricKeys))
    expect(read[0]).toEqual(expect.arrayContaining(SIZES.map((size) => webhookKeys.metricsIndex('acme', 'wh-0', size))))
  })
})
