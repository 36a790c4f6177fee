import Redis from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisBackend } from '../../storage/redis-backend'
import { privateRedis, uniquePrefix } from '../support/redis'
import { commandsDuring as monitorCommands } from '../support/redis-monitor'

/**
 * The lease calls of one turn go to Redis as one script run, in the order they were made (a
 * burst of takes extends 100 leases at once). A Redis of this file's own, watched with MONITOR.
 */
describe('Redis lease calls', () => {
  let redis: Awaited<ReturnType<typeof privateRedis>>
  let backend: RedisBackend

  beforeAll(async () => {
    redis = await privateRedis()
    backend = new RedisBackend(redis.url, uniquePrefix('leases'))
    // The script cached by Redis, so a run is one EVALSHA (a fresh server answers NOSCRIPT once).
    await backend.leases.owner('warm-up')
  })

  afterAll(async () => {
    await backend.close()
    await redis.stop()
  })

  const commandsDuring = (run: () => Promise<void>) => monitorCommands(redis.url, run)

  it('sends the calls of one turn as one script run and answers each', async () => {
    let answers: boolean[] = []
    const commands = await commandsDuring(async () => {
      answers = await Promise.all([
        ...Array.from({ length: 100 }, (_, i) => backend.leases.acquire(`wh-${i}`, 'p1', 5_000)),
        backend.leases.acquire('wh-0', 'p2', 5_000),
      ])
    })
    expect(commands.map(([name]) => name.toLowerCase())).toEqual(['evalsha'])
    // 100 leases taken by p1; the last call, for a lease p1 took earlier in the same run, refused.
    expect(answers.slice(0, 100).every(Boolean)).toBe(true)
    expect(answers[100]).toBe(false)
    expect(await backend.leases.owner('wh-99')).toBe('p1')
  })

  it("applies one lease's calls in the order they were made within a turn", async () => {
    const [taken, , owner, takenBack] = await Promise.all([
      backend.leases.acquire('wh-order', 'p1', 5_000),
      backend.leases.release('wh-order', 'p1'),
      backend.leases.owner('wh-order'),
      backend.leases.acquire('wh-order', 'p2', 5_000),
    ])
    expect([taken, owner, takenBack]).toEqual([true, null, true])
    expect(await backend.leases.owner('wh-order')).toBe('p2')
  })

  it('fails every call of a run that Redis refuses, and the next turn works again', async () => {
    const client = new Redis(redis.url)
    try {
      // A lease key holding a hash: GET inside the script errors, so the whole run does.
      const key = `${backend.prefix}:lease:wh-broken`
      await client.hset(key, 'x', '1')
      const calls = [backend.leases.acquire('wh-broken', 'p1', 5_000), backend.leases.acquire('wh-fine', 'p1', 5_000)]
      for (const call of calls) await expect(call).rejects.toThrow(/WRONGTYPE/)
      expect(await backend.leases.acquire('wh-fine', 'p1', 5_000)).toBe(true)
    } finally {
      client.disconnect()
    }
  })
})
