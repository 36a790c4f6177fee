import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookRecordRepository } from '../../storage/repositories/webhook-records'
import { waitFor } from './support/built-server'
import { RedisCluster } from './support/cluster'

let cluster: RedisCluster

beforeAll(async () => {
  cluster = await RedisCluster.create('wh-shutdown')
})
afterAll(async () => cluster?.close())

describe('graceful shutdown (SIGTERM)', () => {
  it('lets the attempt in flight finish, records it, exits 0; the next process restores the actor and sends nothing twice', async () => {
    const first = await cluster.start()
    const { receiver, webhook } = await cluster.subscribe(first, 'slow')
    receiver.reply = () => ({ status: 200, delayMs: 2_000 })
    await cluster.append(2)
    await waitFor(() => receiver.receipts.length === 1, 10_000, 'the attempt to arrive')

    // SIGTERM while the receiver is still working on the attempt (it answers after 2 s).
    const signalled = Date.now()
    const code = await first.kill('SIGTERM')
    expect(code).toBe(0)
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1_500)
    expect(first.output()).toContain('webhook engine stopped')
    const [record] = (await new WebhookRecordRepository(cluster.backend).listDeliveries('default', webhook.id, 10))
      .items
    expect(record).toMatchObject({ status: 'success', attempts: 1, responseStatus: 200, eventCount: 2 })

    const second = await cluster.start()
    // One event appended after the restart: had the finished batch been sent again, it would arrive
    // first (one batch in flight, oldest first); the next receipt is the new event alone.
    const [later] = await cluster.append(1)
    await waitFor(() => receiver.receipts.length >= 2, 10_000, 'the event appended after the restart')
    expect(receiver.receipts).toHaveLength(2)
    expect(receiver.receipts[1].json.events.map((e) => e.id)).toEqual([later])
    expect(second.output()).toContain('webhook delivery actor restored')
  })
})
