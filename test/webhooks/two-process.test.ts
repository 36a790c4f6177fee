import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBackend, type Backend } from '../../storage'
import { makeEvent } from '../../server/events/factory'
import { systemClock } from '../../server/common/clock'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import { redisUrl, uniquePrefix } from '../support/redis'
import { Receiver } from './support/receiver'
import { bootstrapToken, ensureBuilt, startBuiltServer, waitFor, type BuiltServer } from './support/built-server'

let servers: BuiltServer[] = []
let backend: Backend
let receiver: Receiver
let env: Record<string, string>

beforeAll(async () => {
  ensureBuilt()
  const prefix = uniquePrefix('wh-two')
  env = {
    REDIS_URL: await redisUrl(),
    REDIS_PREFIX: prefix,
    BOOTSTRAP_TOKEN: bootstrapToken(),
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

async function append(count: number) {
  const events = Array.from({ length: count }, () =>
    makeEvent(systemClock, 'default', 'audit.test.ping', { action: 'test.ping', outcome: 'success', statusCode: 200 }),
  )
  await backend.transact([], () => ({ writes: { events }, result: undefined }))
  return events.map((event) => event.id)
}

/** Event ids received, counting each webhook-id once (what a deduplicating receiver keeps). */
function deduplicated(): string[] {
  const seen = new Map<string, string[]>()
  for (const receipt of receiver.receipts) {
    const id = String(receipt.headers['webhook-id'])
    const ids = receipt.json.events.map((e) => e.id)
    if (seen.has(id)) expect(seen.get(id)).toEqual(ids)
    else seen.set(id, ids)
  }
  return [...seen.values()].flat()
}

const pidOf = (owner: string | null) => Number(owner?.split(':')[1])

describe('two server processes on one Redis', () => {
  it('runs each webhook actor in one process; when the owner is killed the other delivers', async () => {
    servers = [await startBuiltServer(env), await startBuiltServer(env)]
    receiver = await new Receiver().start(await (await fetch(`${servers[0].url}/schemas/webhook-events-v1.json`)).json())
    const created = await fetch(`${servers[1].url}/v1/default/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.BOOTSTRAP_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'shared', url: receiver.url, eventTypes: ['audit.test.*'] }),
    })
    const webhook = await created.json()
    receiver.secrets = [webhook.secret]

    const first = await append(5)
    await waitFor(() => receiver.events().length >= 5, 10_000, 'first deliveries')
    const lease = webhookKeys.webhookLease('default', webhook.id)
    const ownerPid = pidOf(await backend.leaseOwner(lease))
    const victim = servers.find((server) => server.pid === ownerPid)!
    const survivor = servers.find((server) => server.pid !== ownerPid)!
    expect(victim).toBeDefined()
    // Exactly one process hosts the actor.
    expect(victim.output()).toContain(webhook.id)
    expect(survivor.output()).not.toContain(`"webhook":"default/${webhook.id}"`)

    await victim.kill('SIGKILL')
    const second = await append(5)
    await waitFor(() => deduplicated().length >= 10, 15_000, 'deliveries after the owner died')
    expect(pidOf(await backend.leaseOwner(lease))).toBe(survivor.pid)
    // Killed right after a delivery, the owner may not have recorded it: the survivor re-sends that
    // batch under the same webhook-id (at-least-once), which a receiver deduplicates on.
    expect(deduplicated()).toEqual([...first, ...second])
    expect(receiver.receipts.every((r) => r.verifiedWith.length === 1 && r.schemaErrors.length === 0)).toBe(true)
  })
})
