import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBackend, type Backend } from '../../storage'
import { makeEvent } from '../../server/events/factory'
import { systemClock } from '../../server/common/clock'
import { redisUrl, uniquePrefix } from '../support/redis'
import { Receiver } from './support/receiver'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import { bootstrapToken, ensureBuilt, startBuiltServer, waitFor, type BuiltServer } from './support/built-server'

const servers: BuiltServer[] = []
let backend: Backend
let receiver: Receiver
let env: Record<string, string>

beforeAll(async () => {
  ensureBuilt()
  const prefix = uniquePrefix('wh-restart')
  env = {
    REDIS_URL: await redisUrl(),
    REDIS_PREFIX: prefix,
    BOOTSTRAP_TOKEN: bootstrapToken(),
    // Attempt 3 is due 8 s after attempt 2: room to kill and restart in between.
    WEBHOOK_RETRY_SCHEDULE: '1s,8s,1s',
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    WEBHOOK_LEASE: '2s',
  }
  backend = createBackend({ redisUrl: env.REDIS_URL, redisPrefix: prefix })
})
afterAll(async () => {
  for (const server of servers) await server.kill('SIGKILL')
  await receiver?.stop()
  await backend?.close()
})

/** Events appended to the shared log by "another producer", as the service's own writers do. */
async function append(count: number, from: number) {
  const events = Array.from({ length: count }, (_, i) =>
    makeEvent(systemClock, 'default', 'audit.test.ping', { action: 'test.ping', outcome: 'success', statusCode: 200, requestId: `n-${from + i}` }),
  )
  await backend.transact([], () => ({ writes: { events }, result: undefined }))
  return events.map((event) => event.id)
}

describe('webhook delivery across a SIGKILL and restart (built server, Redis)', () => {
  it('makes the third attempt at its original due time with the same webhook-id, losing and reordering nothing', async () => {
    const first = await startBuiltServer(env)
    servers.push(first)
    receiver = await new Receiver().start(await (await fetch(`${first.url}/schemas/webhook-events-v1.json`)).json())
    receiver.reply = (_r, i) => ({ status: i < 2 ? 500 : 200 })
    const created = await fetch(`${first.url}/v1/default/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.BOOTSTRAP_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'restart', url: receiver.url, eventTypes: ['audit.test.*'] }),
    })
    expect(created.status).toBe(201)
    const webhook = await created.json()
    receiver.secrets = [webhook.secret]

    const before = await append(3, 0)
    await waitFor(() => receiver.receipts.length === 2, 10_000, 'two failed attempts')
    // Wait until the retrying snapshot (two attempts made) is in storage, then kill without any chance to clean up.
    await waitFor(async () => {
      const stored = await backend.get<{ value: unknown; context: { batch: { attempts: number } | null } }>(webhookKeys.snapshot('default', webhook.id))
      return stored?.value === 'retrying' && stored.context.batch?.attempts === 2
    }, 10_000, 'the stored retrying snapshot')
    await first.kill('SIGKILL')
    const killedAt = Date.now()
    const during = await append(2, 3)

    const second = await startBuiltServer(env)
    servers.push(second)
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
