import { createStorage, type Driver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { LocalBackend } from '../../storage'
import { keys } from '../../storage/repositories/keys'
import type { StoredEvent } from '../../storage/model/events'

/**
 * The local backend writes a transaction's files one by one. Two transactions appending to one
 * namespace's event log write their other files side by side, and their entries in slot order: a
 * reader of the log never finds a later entry before an earlier, empty slot (a webhook's follower
 * would move past it for good).
 */

const NS = 'acme'
const event = (id: string): StoredEvent => ({ id, type: 'config.firewall.updated', time: '', namespace: NS, data: {} })

describe('local backend: transactions appending to one log', () => {
  it('write their files side by side and their entries in slot order', async () => {
    const inner = memoryDriver()
    let release!: () => void
    let reach!: () => void
    const reached = new Promise<void>((resolve) => (reach = resolve))
    let written!: () => void
    const secondWritten = new Promise<void>((resolve) => (written = resolve))
    const driver: Driver = {
      ...inner,
      setItem: async (key, value, options) => {
        if (key === keys.firewall(NS, 'a'))
          await new Promise<void>((resolve) => {
            release = resolve
            reach()
          })
        await inner.setItem!(key, value, options)
        if (key === keys.firewall(NS, 'b')) written()
      },
    }
    const backend = new LocalBackend(createStorage({ driver }))
    const change = (id: string) =>
      backend.keyValue.transact([keys.firewall(NS, id)], () => ({
        writes: { set: { [keys.firewall(NS, id)]: { id } }, events: [event(`e-${id}`)] },
        result: undefined,
      }))
    const ids = async () =>
      (await backend.logs.range<StoredEvent>(keys.eventLog(NS), { limit: 10 })).map((entry) => entry.value.id)

    const first = change('a')
    await reached
    // The second transaction, slotted after the first, writes its document meanwhile...
    let secondDone = false
    const second = change('b').then(() => (secondDone = true))
    await secondWritten
    expect(await backend.keyValue.get(keys.firewall(NS, 'b'))).toEqual({ id: 'b' })
    // ...but not its entry before the first's: the log shows neither yet.
    expect(await ids()).toEqual([])
    expect(secondDone).toBe(false)
    release()
    await Promise.all([first, second])
    expect(await ids()).toEqual(['e-a', 'e-b'])
  })
})
