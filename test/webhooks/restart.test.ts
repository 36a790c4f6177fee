import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import { waitFor } from './support/built-server'
import { RedisCluster } from './support/cluster'

let cluster: RedisCluster

beforeAll(async () => {
  cluster = await RedisCluster.create('wh-restart', {
    // Attempt 3 is due 8 s after attempt 2: room to kill and restart in between.
    WEBHOOK_RETRY_SCHEDULE: '1s,8s,1s',
  })
})
afterAll(async () => cluster?.close())

describe('webhook delivery across a SIGKILL and restart (built server, Redis)', () => {
  it('makes the third attempt at its original due time with the same webhook-id, losing and reordering nothing', async () => {
    const first = await cluster.start()
    const { receiver, webhook } = await cluster.subscribe(first, 'restart')
    receiver.reply = (_r, i) => ({ status: i < 2 ? 500 : 200 })

    const before = await cluster.append(3)
    await waitFor(() => receiver.receipts.length === 2, 10_000, 'two failed attempts')
    // Wait until the retrying snapshot (two attempts made) is in storage, then kill without any chance to clean up.
    await waitFor(
      async () => {
        const stored = await cluster.backend.keyValue.get<{
          value: unknown
          context: { batch: { attempts: number } | null }
        }>(webhookKeys.snapshot('default', webhook.id))
        return stored?.value === 'retrying' && stored.context.batch?.attempts === 2
      },
      10_000,
      'the stored retrying snapshot',
    )
    await first.kill('SIGKILL')
    const killedAt = Date.now()
    const during = await cluster.append(2)

    const second = await cluster.start()
    await waitFor(() => receiver.receipts.length >= 3, 15_000, 'the third attempt')
    await waitFor(() => receiver.events().length >= 3 + 3 + 3 + 2, 10_000, 'the backlog')

    const [a1, a2, a3] = receiver.receipts
    expect(killedAt).toBeLessThan(a2.at + 8_000)
    expect(Math.abs(a3.at - (a2.at + 8_000))).toBeLessThan(1_000)
    expect(new Set([a1, a2, a3].map((r) => r.headers['webhook-id'])).size).toBe(1)
    expect(a3.json.events.map((e) => e.id)).toEqual(before)
    const delivered = receiver.receipts.slice(2).flatMap((r) => r.json.events.map((e) => e.id))
    expect(delivered).toEqual([...before, ...during])
    expect(receiver.receipts.every((r) => r.verifiedWith.length === 1 && r.schemaErrors.length === 0)).toBe(true)
    expect(second.output()).toContain('webhook delivery actor restored')
  })
})
