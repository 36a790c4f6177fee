import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBackend, type Backend } from '../../storage'
import { makeEvent } from '../../server/events/factory'
import { systemClock } from '../../server/common/clock'
import { WebhookRecordRepository } from '../../storage/repositories/webhook-records'
import { redisUrl, uniquePrefix } from '../support/redis'
import { Receiver } from './support/receiver'
import { bootstrapToken, ensureBuilt, startBuiltServer, waitFor, type BuiltServer } from './support/built-server'

const servers: BuiltServer[] = []
let backend: Backend
let receiver: Receiver
let env: Record<string, string>

beforeAll(async () => {
  ensureBuilt()
  const prefix = uniquePrefix('wh-shutdown')
  env = { REDIS_URL: await redisUrl(), REDIS_PREFIX: prefix, BOOTSTRAP_TOKEN: bootstrapToken(), WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WEBHOOK_LEASE: '2s' }
  backend = createBackend({ redisUrl: env.REDIS_URL, redisPrefix: prefix })
})
afterAll(async () => {
  for (const server of servers) await server.kill('SIGKILL')
  await receiver?.stop()
  await backend?.close()
})

describe('graceful shutdown (SIGTERM)', () => {
  it('lets the attempt in flight finish, records it, exits 0; the next process restores the actor and sends nothing twice', async () => {
    const first = await startBuiltServer(env)
    servers.push(first)
    receiver = await new Receiver().start(await (await fetch(`${first.url}/schemas/webhook-events-v1.json`)).json())
    receiver.reply = () => ({ status: 200, delayMs: 2_000 })
    const created = await fetch(`${first.url}/v1/default/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.BOOTSTRAP_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'slow', url: receiver.url, eventTypes: ['audit.test.*'] }),
    })
    const webhook = await created.json()
    receiver.secrets = [webhook.secret]
    const events = [1, 2].map(() => makeEvent(systemClock, 'default', 'audit.test.ping', { action: 'test.ping', outcome: 'success', statusCode: 200 }))
    await backend.transact([], () => ({ writes: { events }, result: undefined }))
    await waitFor(() => receiver.receipts.length === 1, 10_000, 'the attempt to arrive')

    // SIGTERM while the receiver is still working on the attempt (it answers after 2 s).
    const signalled = Date.now()
    const code = await first.kill('SIGTERM')
    expect(code).toBe(0)
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1_500)
    expect(first.output()).toContain('webhook engine stopped')
    const [record] = (await new WebhookRecordRepository(backend).listDeliveries('default', webhook.id, 10)).items
    expect(record).toMatchObject({ status: 'success', attempts: 1, responseStatus: 200, eventCount: 2 })

    const second = await startBuiltServer(env)
    servers.push(second)
    await new Promise((r) => setTimeout(r, 1_500))
    expect(receiver.receipts).toHaveLength(1)
    expect(second.output()).toContain('webhook delivery actor restored')
  })
})
