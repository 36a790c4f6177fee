import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { webhookKeys } from '../../storage/repositories/webhook-keys'
import type { Receiver } from './support/receiver'
import { waitFor } from './support/built-server'
import { RedisCluster } from './support/cluster'
import { SHARED_STORAGES } from '../support/backends'

/** Event ids received, counting each webhook-id once (what a deduplicating receiver keeps). */
function deduplicated(receiver: Receiver): string[] {
  const seen = new Map<string, string[]>()
  for (const receipt of receiver.receipts) {
    const id = String(receipt.headers['webhook-id'])
    const ids = receipt.json.events.map((e) => e.id)
    if (seen.has(id)) expect(seen.get(id)).toEqual(ids)
    else seen.set(id, ids)
  }
  return [...seen.values()].flat()
}

/** The process id inside a lease owner (`host:pid:random`). */
const pidOf = (owner: string | null) => Number(owner?.split(':')[1])

describe.each(SHARED_STORAGES)('two server processes on one %s', (storage) => {
  let cluster: RedisCluster
  beforeAll(async () => {
    cluster = await RedisCluster.create('wh-two', {}, storage)
  })
  afterAll(async () => cluster?.close())

  it('runs each webhook actor in one process; when the owner is killed the other delivers', async () => {
    const servers = [await cluster.start(), await cluster.start()]
    const { receiver, webhook } = await cluster.subscribe(servers[1], 'shared')

    const first = await cluster.append(5)
    await waitFor(() => receiver.events().length >= 5, 10_000, 'first deliveries')
    const lease = webhookKeys.webhookLease('default', webhook.id)
    const ownerPid = pidOf(await cluster.backend.leases.owner(lease))
    const victim = servers.find((server) => server.pid === ownerPid)!
    const survivor = servers.find((server) => server.pid !== ownerPid)!
    expect(victim).toBeDefined()
    // Exactly one process hosts the actor.
    expect(victim.output()).toContain(webhook.id)
    expect(survivor.output()).not.toContain(`"webhook":"default/${webhook.id}"`)

    await victim.kill('SIGKILL')
    const second = await cluster.append(5)
    await waitFor(() => deduplicated(receiver).length >= 10, 15_000, 'deliveries after the owner died')
    expect(pidOf(await cluster.backend.leases.owner(lease))).toBe(survivor.pid)
    // Killed right after a delivery, the owner may not have recorded it: the survivor re-sends that
    // batch under the same webhook-id (at-least-once), which a receiver deduplicates on.
    expect(deduplicated(receiver)).toEqual([...first, ...second])
    expect(receiver.receipts.every((r) => r.verifiedWith.length === 1 && r.schemaErrors.length === 0)).toBe(true)
  })
})
