import { spawnSync } from 'node:child_process'
import { mkdtempSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, type Driver } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createBackend, LocalBackend } from '../../storage'
import { atomicFsDriver } from '../../storage/atomic-fs-driver'
import { keys } from '../../storage/repositories/keys'
import type { StoredEvent } from '../../storage/model/events'

/**
 * On fs storage a transaction of several keys is several files. A process that stopped between
 * two of them (killed, out of memory) left a firewall without its history entry and a change
 * without its event, which no webhook then delivered. Each such transaction is journaled first
 * and finished when the storage is next opened (storage/local/journal.ts).
 */

const NS = 'acme'
const doc = keys.firewall(NS, 'fw1')
const history = keys.firewallVersion(NS, 'fw1', 2)
const event = (id: string): StoredEvent => ({
  id,
  type: 'config.firewall.updated',
  time: '2026-11-28T00:00:00.000Z',
  namespace: NS,
  data: {},
})

/** A write the driver holds forever (the process stopped there), and when it was reached. */
interface Stop {
  driver: Driver
  reached: Promise<string>
}

/**
 * The fs driver of `base`, stopping at the first write or removal `where` picks: it never completes,
 * and nothing after it in the transaction runs, as when the process is killed at that point.
 */
function stoppingAt(base: string, where: (key: string, operation: 'set' | 'remove') => boolean): Stop {
  const inner = atomicFsDriver({ base })
  let reach!: (key: string) => void
  const reached = new Promise<string>((resolve) => (reach = resolve))
  let stopped = false
  const stop = <T>(key: string, operation: 'set' | 'remove', run: () => T): T | Promise<never> => {
    if (stopped || !where(key, operation)) return run()
    stopped = true
    reach(key)
    return new Promise<never>(() => undefined)
  }
  const driver: Driver = {
    ...inner,
    setItem: (key, value, options) => stop(key, 'set', () => inner.setItem!(key, value, options)),
    setItemRaw: (key, value, options) => stop(key, 'set', () => inner.setItemRaw!(key, value, options)),
    removeItem: (key, options) => stop(key, 'remove', () => inner.removeItem!(key, options)),
  }
  return { driver, reached }
}

/** A transaction that changes a firewall: its document, its history entry and its event. */
function changeFirewall(backend: LocalBackend, version: number, eventId: string): Promise<void> {
  return backend.keyValue.transact([doc], () => ({
    writes: {
      set: { [doc]: { id: 'fw1', version }, [keys.firewallVersion(NS, 'fw1', version)]: { id: 'fw1', version } },
      events: [event(eventId)],
    },
    result: undefined,
  }))
}

/** Version 2 of the firewall, written on `base` by a process stopped at the first write `where` picks. */
async function stopChange(base: string, where: Parameters<typeof stoppingAt>[1]): Promise<void> {
  const { driver, reached } = stoppingAt(base, where)
  void changeFirewall(new LocalBackend(createStorage({ driver })), 2, 'e-2')
  await reached
}

const eventIds = async (backend: LocalBackend) =>
  (await backend.logs.range<StoredEvent>(keys.eventLog(NS), { limit: 100 })).map((entry) => entry.value.id)

const journalKeys = (backend: LocalBackend) => backend.storage.getKeys('journal')

const freshDir = () => mkdtempSync(join(tmpdir(), 'pf-journal-'))

describe('a transaction on fs storage', () => {
  it('that stopped between its files is finished when the storage is next opened', async () => {
    const base = freshDir()
    // Stopped at the event, the last file: the document and its history entry are written.
    await stopChange(base, (key) => key.startsWith('log:'))

    // What a restart found before the journal: the change without its event, never delivered.
    const look = new LocalBackend(createStorage({ driver: atomicFsDriver({ base }) }))
    expect(await look.keyValue.get(history)).toEqual({ id: 'fw1', version: 2 })
    expect(await eventIds(look)).toEqual([])

    const reopened = (await createBackend({ dataDir: base })) as LocalBackend
    expect(await eventIds(reopened)).toEqual(['e-2'])
    expect(await journalKeys(reopened)).toEqual([])
    // The log goes on after the entry it finished.
    await changeFirewall(reopened, 3, 'e-3')
    expect(await eventIds(reopened)).toEqual(['e-2', 'e-3'])
  })

  it('that stopped after its last file but before forgetting its record is applied again, nothing doubled', async () => {
    const base = freshDir()
    await stopChange(base, (key, operation) => operation === 'remove' && key.startsWith('journal:'))

    const reopened = (await createBackend({ dataDir: base })) as LocalBackend
    expect(await reopened.keyValue.get(doc)).toEqual({ id: 'fw1', version: 2 })
    expect(await reopened.keyValue.get(history)).toEqual({ id: 'fw1', version: 2 })
    expect(await eventIds(reopened)).toEqual(['e-2'])
    expect(await journalKeys(reopened)).toEqual([])
  })

  it('left by a process still running (the service, while the admin CLI opens the directory) is left to it', async () => {
    const base = freshDir()
    await stopChange(base, (key) => key.startsWith('log:'))
    // The same record, as written by the process that started this one (running).
    const files = createStorage({ driver: atomicFsDriver({ base }) })
    const [own] = await files.getKeys('journal')
    const running = `journal:${process.ppid}:${own.split(':')[2]}`
    await files.setItemRaw(running, await files.getItemRaw(own))
    await files.removeItem(own)

    const opened = (await createBackend({ dataDir: base })) as LocalBackend
    expect(await eventIds(opened)).toEqual([])
    expect(await journalKeys(opened)).toEqual([running])

    // Once that process has stopped (a process that ran and exited), the next open finishes it.
    const exited = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    })
    const left = `journal:${exited.stdout}:${own.split(':')[2]}`
    await files.setItemRaw(left, await files.getItemRaw(running))
    await files.removeItem(running)
    const reopened = (await createBackend({ dataDir: base })) as LocalBackend
    expect(await eventIds(reopened)).toEqual(['e-2'])
    expect(await journalKeys(reopened)).toEqual([])
  })

  it('left unfinished is never applied over a later change of its keys', async () => {
    const base = freshDir()
    await stopChange(base, (key) => key.startsWith('log:'))
    // A process that did not finish the record (it opened the directory without recovering, as a
    // reused process id would let it) changes the same firewall, and its event takes the free slot.
    const later = new LocalBackend(createStorage({ driver: atomicFsDriver({ base }) }))
    await changeFirewall(later, 3, 'e-3')
    await later.keyValue.transact([doc], () => ({
      writes: { set: { [doc]: { id: 'fw1', version: 3, renamed: true } } },
      result: undefined,
    }))
    // Their files are dated after the record (set here: a coarse file clock may date a write made
    // within a few ms of the record at its time).
    const [slot] = await later.logs.range(keys.eventLog(NS), { limit: 1 })
    const newer = new Date(Date.now() + 60_000)
    for (const key of [doc, `log:${keys.eventLog(NS)}:${slot.cursor}`])
      utimesSync(join(base, key.replace(/:/g, '/')), newer, newer)

    const reopened = (await createBackend({ dataDir: base })) as LocalBackend
    expect(await reopened.keyValue.get(doc)).toEqual({ id: 'fw1', version: 3, renamed: true })
    expect(await eventIds(reopened)).toEqual(['e-3'])
    // What nothing wrote since is still finished: the change's history entry.
    expect(await reopened.keyValue.get(history)).toEqual({ id: 'fw1', version: 2 })
    expect(await journalKeys(reopened)).toEqual([])
  })

  it('whose write failed while the process runs leaves no record to apply over later writes', async () => {
    const base = freshDir()
    const inner = atomicFsDriver({ base })
    let failing = true
    const driver: Driver = {
      ...inner,
      setItem: (key, value, options) =>
        failing && key === history
          ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }))
          : inner.setItem!(key, value, options),
    }
    const backend = new LocalBackend(createStorage({ driver }))
    await expect(changeFirewall(backend, 2, 'e-2')).rejects.toThrow(/ENOSPC/)
    expect(await journalKeys(backend)).toEqual([])
    failing = false
    await changeFirewall(backend, 3, 'e-3')

    const reopened = (await createBackend({ dataDir: base })) as LocalBackend
    expect(await reopened.keyValue.get(doc)).toEqual({ id: 'fw1', version: 3 })
    expect(await eventIds(reopened)).toEqual(['e-3'])
  })

  it('of one file writes no journal', async () => {
    const base = freshDir()
    const inner = atomicFsDriver({ base })
    const written: string[] = []
    const driver: Driver = {
      ...inner,
      setItemRaw: (key, value, options) => {
        written.push(key)
        return inner.setItemRaw!(key, value, options)
      },
    }
    const backend = new LocalBackend(createStorage({ driver }))
    await backend.keyValue.transact([doc], () => ({ writes: { set: { [doc]: { id: 'fw1' } } }, result: undefined }))
    expect(await backend.keyValue.get(doc)).toEqual({ id: 'fw1' })
    expect(written.filter((key) => key.startsWith('journal:'))).toEqual([])
    await changeFirewall(backend, 2, 'e-2')
    expect(written.filter((key) => key.startsWith('journal:'))).toHaveLength(1)
  })
})
