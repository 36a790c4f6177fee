import { createStorage, type Driver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { emptyFirewall } from '../support/documents'
import { BACKEND_KINDS, SHARED_STORAGES, backendOfEnv, makeBackend, sharedStorageEnv } from '../support/backends'
import { LocalBackend, type Backend } from '../../storage'
import type { RedisBackend } from '../../storage'
import { FirewallRepository, type StoredFirewall } from '../../storage/repositories/firewalls'
import type { Firewall } from '../../server/firewall/schema'
import { keys } from '../../storage/repositories/keys'
import { SecretBox } from '../../storage/secrets/secret-box'

/**
 * The namespace's firewall write stamp is kept by each process (#27: a read of a firewall asked
 * storage for it on every API call) and ends when any process writes a firewall of the namespace.
 */
const put = (repo: FirewallRepository<Firewall>, id: string, description: string) =>
  repo.mutate('ns', id, {}, 'now', (current) => ({
    next: { ...(current ?? emptyFirewall(id)), description },
    summary: 'put',
    result: (stored) => stored,
  }))

/**
 * Writes a firewall and the stamp straight to storage, as a change whose announcement never came:
 * one transaction that announces nothing, stored as a firewall write stores them (JSON).
 */
async function writeUnannounced(backend: Backend, id: string, description: string): Promise<void> {
  const stored = (await backend.keyValue.get<StoredFirewall>(keys.firewall('ns', id)))!
  await backend.keyValue.transact([], () => ({
    writes: {
      set: {
        [keys.firewall('ns', id)]: { ...stored, description, version: stored.version + 1 },
        [keys.firewallStamp('ns')]: `unannounced-${description}`,
      },
    },
    result: undefined,
  }))
}

const backends: Backend[] = []
afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()))
})

describe.each(BACKEND_KINDS)('firewall write stamps (%s)', (kind) => {
  it('are kept while nothing is written, and end at this process own write', async () => {
    const backend = await makeBackend(kind)
    backends.push(backend)
    const repo = new FirewallRepository<Firewall>(backend, new SecretBox())
    await put(repo, 'a', 'one')
    await repo.list('ns')
    await backend.signals.eventsReady()
    expect((await repo.get('ns', 'a'))?.description).toBe('one')
    // Kept: a change that announces nothing is not seen (storage is not asked for the stamp).
    await writeUnannounced(backend, 'a', 'unseen')
    expect((await repo.get('ns', 'a'))?.description).toBe('one')
    expect((await repo.list('ns')).map((fw) => fw.description)).toEqual(['one'])
    // What a read answers without a turn (getKept, listKept) is the same kept version.
    expect(repo.getKept('ns', 'a')?.description).toBe('one')
    expect(repo.getKept('ns', 'missing')).toBeNull()
    expect(repo.listKept('ns')?.map((fw) => fw.description)).toEqual(['one'])
    // This process's own write is seen by its next read, at once.
    await put(repo, 'b', 'two')
    expect(repo.getKept('ns', 'a')).toBeUndefined()
    expect(repo.listKept('ns')).toBeUndefined()
    expect((await repo.list('ns')).map((fw) => fw.description)).toEqual(['unseen', 'two'])
  })
})

describe.each(SHARED_STORAGES)('firewall write stamps across processes (%s)', (kind) => {
  it('a write through another process ends the kept stamp when its announcement arrives', async () => {
    const env = await sharedStorageEnv(kind, 'stamps')
    const [writer, reader] = await Promise.all([backendOfEnv(env), backendOfEnv(env)])
    backends.push(writer, reader)
    const box = new SecretBox()
    const [writing, reading] = [
      new FirewallRepository<Firewall>(writer, box),
      new FirewallRepository<Firewall>(reader, box),
    ]
    await put(writing, 'a', 'one')
    await reading.list('ns')
    await reader.signals.eventsReady()
    expect((await reading.get('ns', 'a'))?.description).toBe('one')
    // Events appended alone (another call's audit entry) end nothing.
    const appended = new Promise<void>((resolve) => {
      const off = reader.signals.onEvents((ns) => ns === 'ns' && (off(), resolve()))
    })
    const audit = { id: 'evt-audit', type: 'audit.token.created', time: new Date().toISOString(), namespace: 'ns' }
    await writer.keyValue.transact(['ns:{ns}:other'], () => ({
      writes: { set: { 'ns:{ns}:other': 1 }, events: [audit as never] },
      result: undefined,
    }))
    await appended
    expect(reading.getKept('ns', 'a')?.description).toBe('one')
    const announced = new Promise<void>((resolve) => {
      const off = reader.signals.onChanges((change) => change.ns === 'ns' && (off(), resolve()))
    })
    // No event in this write: the repository announces every write itself.
    expect(reading.getKept('ns', 'a')?.description).toBe('one')
    await put(writing, 'a', 'two')
    await announced
    // Nothing answered without a read once the announcement came.
    expect(reading.getKept('ns', 'a')).toBeUndefined()
    expect(reading.listKept('ns')).toBeUndefined()
    expect((await reading.get('ns', 'a'))?.description).toBe('two')
    expect(reading.getKept('ns', 'a')?.description).toBe('two')
    expect((await reading.list('ns')).map((fw) => fw.version)).toEqual([2])
  })
})

describe('firewall write stamps when notifications are missed (redis)', () => {
  it('a dropped subscription ends every kept stamp, and none is kept until it is confirmed again', async () => {
    const backend = await makeBackend('redis')
    backends.push(backend)
    const repo = new FirewallRepository<Firewall>(backend, new SecretBox())
    await put(repo, 'a', 'one')
    await repo.list('ns')
    await backend.signals.eventsReady()
    expect(backend.signals.eventsLive()).toBe(true)
    await repo.get('ns', 'a')

    let missed = 0
    const waiting = new Map<number, () => void>()
    const missedTimes = (count: number) => new Promise<void>((resolve) => waiting.set(count, resolve))
    backend.signals.onEventsMissed(() => waiting.get(++missed)?.())
    // Told twice: when the connection drops, and when the subscription is confirmed again.
    const dropped = missedTimes(1)
    const confirmedAgain = missedTimes(2)
    // The subscriber's connection is closed by Redis, as a network failure would.
    const subscriber = (backend.signals as unknown as { subscriber: Redis }).subscriber
    const address = `${subscriber.stream.localAddress}:${subscriber.stream.localPort}`
    await ((backend as RedisBackend).redis as Redis).client('KILL', 'ADDR', address)
    await dropped
    expect(backend.signals.eventsLive()).toBe(false)
    expect(repo.getKept('ns', 'a')).toBeUndefined()
    expect(repo.listKept('ns')).toBeUndefined()

    // Changed meanwhile, its announcement lost: the kept stamp ended with the drop.
    await writeUnannounced(backend, 'a', 'changed while deaf')
    expect((await repo.get('ns', 'a'))?.description).toBe('changed while deaf')

    await confirmedAgain
    expect(backend.signals.eventsLive()).toBe(true)
    await repo.get('ns', 'a')
    await writeUnannounced(backend, 'a', 'kept again')
    expect((await repo.get('ns', 'a'))?.description).toBe('changed while deaf')
  })
})

describe('firewall write stamps on fs storage, a read while a write lands', () => {
  /**
   * A local backend's files land one by one. A read that found the new stamp but the old document
   * (the stamp's file landed first) kept that document under the new stamp: every later read of
   * the firewall answered the old version until the next write of the namespace (a rule just
   * added was not applied). The stamp lands after the files it stamps (`TxWrites.stamps`).
   */
  it('never keeps an older document under a newer stamp', async () => {
    const inner = memoryDriver()
    let holdNext = false
    let reachedHold!: () => void
    let releaseHold!: () => void
    const driver: Driver = {
      ...inner,
      setItem: async (key, value, options) => {
        if (holdNext && key === keys.firewall('ns', 'a')) {
          holdNext = false
          await new Promise<void>((resolve) => {
            releaseHold = resolve
            reachedHold()
          })
        }
        return inner.setItem!(key, value, options)
      },
    }
    const backend = new LocalBackend(createStorage({ driver }))
    backends.push(backend)
    const repo = new FirewallRepository<Firewall>(backend, new SecretBox())
    await put(repo, 'a', 'one')

    // The next write's document is held back while every other file of it lands.
    const reached = new Promise<void>((resolve) => (reachedHold = resolve))
    holdNext = true
    const writing = put(repo, 'a', 'two')
    await reached
    // A reader in another request meanwhile (a separate repository: no shared cache to end).
    const reader = new FirewallRepository<Firewall>(backend, new SecretBox())
    const during = await reader.get('ns', 'a')
    releaseHold()
    await writing
    expect(['one', 'two']).toContain(during?.description)
    expect((await reader.get('ns', 'a'))?.description).toBe('two')
    expect((await reader.list('ns')).map((fw) => fw.description)).toEqual(['two'])
  })
})
