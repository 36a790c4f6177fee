import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import type { Backend } from '../../storage'
import type { ChangeAnnouncement, ChangeScope } from '../../storage/ports'
import { keys } from '../../storage/repositories/keys'
import { CrossSlotError } from '../../storage/redis-target'
import { writeLegacyData } from '../support/legacy-events'

describe.each(BACKEND_KINDS)('backend contract (%s)', (kind) => {
  let backend: Backend
  beforeEach(async () => {
    backend = await makeBackend(kind)
  })
  afterEach(async () => {
    await backend.close()
  })

  it('stores and reads JSON values, many at once', async () => {
    await backend.keyValue.set('a:1', { n: 1 })
    await backend.keyValue.set('a:2', { n: 2 })
    expect(await backend.keyValue.get('a:1')).toEqual({ n: 1 })
    expect(await backend.keyValue.getMany(['a:2', 'a:missing', 'a:1'])).toEqual([{ n: 2 }, null, { n: 1 }])
    expect((await backend.keyValue.keys('a')).sort()).toEqual(['a:1', 'a:2'])
  })

  it('reads and lists keys of many hash tags (on a cluster: spread over every master)', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `ns:{n${i}}:doc`)
    await Promise.all(names.map((key, i) => backend.keyValue.set(key, { i })))
    expect((await backend.keyValue.keys('ns')).sort()).toEqual([...names].sort())
    expect(await backend.keyValue.getMany([names[7], 'ns:{none}:doc', names[31]])).toEqual([{ i: 7 }, null, { i: 31 }])
  })

  it('stores raw bytes as they are, apart from JSON values', async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0x7b, 0x22])
    expect(await backend.keyValue.getBytes('raw:1')).toBeNull()
    expect(await backend.keyValue.has('raw:1')).toBe(false)
    await backend.keyValue.setBytes('raw:1', bytes)
    expect(await backend.keyValue.has('raw:1')).toBe(true)
    expect(Buffer.compare((await backend.keyValue.getBytes('raw:1'))!, bytes)).toBe(0)
    await backend.keyValue.delete('raw:1')
    expect(await backend.keyValue.getBytes('raw:1')).toBeNull()
  })

  it('runs read-modify-write transactions without losing concurrent updates', async () => {
    await Promise.all(
      Array.from({ length: 40 }, () =>
        backend.keyValue.transact(['counter'], (values) => {
          const next = Number(values.get('counter') ?? 0) + 1
          return { writes: { set: { counter: next } }, result: next }
        }),
      ),
    )
    expect(await backend.keyValue.get('counter')).toBe(40)
  })

  it('runs a transaction on assumed values when they are current, and on the stored ones when not', async () => {
    await backend.keyValue.set('doc', { v: 1 })
    const seen: unknown[] = []
    const bump = (assumed: unknown) =>
      backend.keyValue.transact(
        ['doc'],
        (values) => {
          const current = values.get('doc') as { v: number }
          seen.push(current)
          return { writes: { set: { doc: { v: current.v + 1 } } }, result: current.v + 1 }
        },
        { assume: new Map([['doc', assumed]]) },
      )
    expect(await bump({ v: 1 })).toBe(2)
    // Out of date (another writer moved on): the stored value decides, never the assumed one.
    expect(await bump({ v: 1 })).toBe(3)
    expect(await bump(null)).toBe(4)
    expect(await backend.keyValue.get('doc')).toEqual({ v: 4 })
    expect(seen.at(-1)).toEqual({ v: 3 })
  })

  it('notices a concurrent change of a long value (compared by its hash on Redis), non-ASCII text included', async () => {
    type Doc = { text: string; items: number[] }
    const text = 'ünïcödé ✓ 包 '.repeat(20)
    await backend.keyValue.set('long', { text, items: [] })
    const append = (item: number, assumed?: Doc) =>
      backend.keyValue.transact(
        ['long'],
        (values) => {
          const current = values.get('long') as Doc
          return { writes: { set: { long: { ...current, items: [...current.items, item] } } }, result: undefined }
        },
        assumed ? { assume: new Map([['long', assumed]]) } : {},
      )
    await Promise.all(Array.from({ length: 30 }, (_, item) => append(item)))
    // Out of date by one item: the stored value decides.
    await append(30, { text, items: [] })
    const stored = (await backend.keyValue.get<Doc>('long'))!
    expect(stored.text).toBe(text)
    expect([...stored.items].sort((a, b) => a - b)).toEqual(Array.from({ length: 31 }, (_, item) => item))
  })

  it('writes nothing when the transaction body throws', async () => {
    await backend.keyValue.set('k', 1)
    await expect(
      backend.keyValue.transact(['k'], () => {
        throw new Error('abort')
      }),
    ).rejects.toThrow('abort')
    expect(await backend.keyValue.get('k')).toBe(1)
  })

  it('appends events to their namespace log atomically with writes and notifies listeners with the namespace', async () => {
    let notified = 0
    const stop = backend.signals.onEvents(() => notified++)
    const seen = new Promise<string>((resolve) => {
      const off = backend.signals.onEvents((ns) => (off(), resolve(ns)))
    })
    await backend.signals.eventsReady()
    await backend.keyValue.transact(['ns:{ns}:doc'], () => ({
      writes: {
        set: { 'ns:{ns}:doc': { v: 1 } },
        events: [
          { id: 'evt-1', type: 'config.firewall.created', time: new Date().toISOString(), namespace: 'ns', data: {} },
        ],
      },
      result: null,
    }))
    expect(await seen).toBe('ns')
    stop()
    expect(notified).toBeGreaterThanOrEqual(1)
    const entries = await backend.logs.range<{ id: string }>(keys.eventLog('ns'), { limit: 10 })
    expect(entries.map((entry) => entry.value.id)).toEqual(['evt-1'])
  })

  it('tells change listeners of an announced change, with or without events, and not of events alone', async () => {
    const changed: ChangeAnnouncement[] = []
    const stopChanges = backend.signals.onChanges((change) => changed.push(change))
    let appended = 0
    const appendedWaits = new Map<number, () => void>()
    const stopEvents = backend.signals.onEvents((ns) => ns === 'ns' && appendedWaits.get(++appended)?.())
    const notifications = (count: number) => new Promise<void>((resolve) => appendedWaits.set(count, resolve))
    await backend.signals.eventsReady()
    const write = (value: number, announce: ChangeScope | null, events: boolean) =>
      backend.keyValue.transact(['ns:{ns}:doc'], () => ({
        writes: {
          set: { 'ns:{ns}:doc': value },
          ...(events
            ? {
                events: [
                  { id: `evt-${value}`, type: 'config.firewall.created' as const, time: '', namespace: 'ns', data: {} },
                ],
              }
            : {}),
          ...(announce ? { announce: { ns: 'ns', scope: announce } } : {}),
        },
        result: null,
      }))
    // Both notifications of one transaction come from one script, in order (events first): once
    // the second write's events notification arrived, a change notification of the first would have.
    const twoAppended = notifications(2)
    await write(1, null, true)
    await write(2, null, true)
    await twoAppended
    expect(changed).toEqual([])
    const withEvents = notifications(3)
    await write(3, 'access', true)
    // This process's listeners are told at the commit, before the caller goes on (on Redis the
    // published message may come back before the script's reply, and tell them once more).
    expect(changed).toContainEqual({ ns: 'ns', scope: 'access' })
    expect(changed.every((change) => change.scope === 'access')).toBe(true)
    await withEvents
    const withoutEvents = notifications(4)
    await write(4, 'firewalls', false)
    expect(changed).toContainEqual({ ns: 'ns', scope: 'firewalls' })
    await withoutEvents
    // On Redis the published messages tell them again when they come back: the same changes.
    const times = backend.kind === 'redis' ? 2 : 1
    await vi.waitFor(() => expect(changed.length).toBe(2 * times))
    stopEvents()
    stopChanges()
    expect(changed.every((change) => change.ns === 'ns')).toBe(true)
    expect(changed.filter((change) => change.scope === 'access').length).toBe(times)
    expect(changed.filter((change) => change.scope === 'firewalls').length).toBe(times)
  })

  it('refuses a transaction whose events or keys span namespaces, writing nothing', async () => {
    const event = (namespace: string) => ({
      id: `evt-${namespace}`,
      type: 'config.firewall.created' as const,
      time: new Date().toISOString(),
      namespace,
      data: {},
    })
    await expect(
      backend.keyValue.transact([], () => ({ writes: { events: [event('a'), event('b')] }, result: null })),
    ).rejects.toThrow(/namespaces a and b/)
    await expect(
      backend.keyValue.transact([keys.firewall('b', 'fw')], () => ({
        writes: { set: { [keys.firewall('b', 'fw')]: 1 }, events: [event('a')] },
        result: null,
      })),
    ).rejects.toThrow(/namespace a in a transaction on/)
    expect(await backend.keyValue.get(keys.firewall('b', 'fw'))).toBeNull()
    expect(await backend.logs.length(keys.eventLog('a'))).toBe(0)
  })

  it('pages a log in both directions with stable cursors', async () => {
    const cursors = await backend.logs.append('audit', [1, 2, 3, 4, 5])
    expect(cursors).toHaveLength(5)
    const newest = await backend.logs.range<number>('audit', { limit: 2, newestFirst: true })
    expect(newest.map((e) => e.value)).toEqual([5, 4])
    const older = await backend.logs.range<number>('audit', { before: newest[1].cursor, limit: 10 })
    expect(older.map((e) => e.value)).toEqual([3, 2, 1])
    const after = await backend.logs.range<number>('audit', { after: cursors[2], limit: 10 })
    expect(after.map((e) => e.value)).toEqual([4, 5])
    expect(await backend.logs.length('audit')).toBe(5)
  })

  it('trims a log by time', async () => {
    await backend.logs.append('old', [1, 2])
    expect(await backend.logs.trimBefore('old', Date.now() + 1000)).toBe(2)
    expect(await backend.logs.length('old')).toBe(0)
    await backend.logs.append('old', [3])
    expect((await backend.logs.range<number>('old', { limit: 5 })).map((e) => e.value)).toEqual([3])
  })

  it('appends entries with their own time, never going back, and trims them by it', async () => {
    const now = Date.now()
    const day = 86_400_000
    await backend.logs.append('dated', ['kept'])
    const cursors = await backend.logs.appendAt('dated', [
      { time: now - 3 * day, value: 'behind' },
      { time: now + day, value: 'ahead' },
      { time: now, value: 'after ahead' },
    ])
    expect(cursors).toHaveLength(3)
    const entries = await backend.logs.range<string>('dated', { limit: 10 })
    expect(entries.map((entry) => entry.value)).toEqual(['kept', 'behind', 'ahead', 'after ahead'])
    // Dated like the newest entry before it when older; later entries keep their order.
    expect(entries[1].time).toBe(entries[0].time)
    expect(entries[2].time).toBe(now + day)
    expect(entries[3].time).toBe(now + day)
    expect(await backend.logs.trimBefore('dated', now + 1000)).toBe(2)
    expect((await backend.logs.range<string>('dated', { limit: 10 })).map((entry) => entry.value)).toEqual([
      'ahead',
      'after ahead',
    ])

    await backend.logs.appendAt('old-first', [{ time: now - 3 * day, value: 'old' }])
    expect(await backend.logs.trimBefore('old-first', now - day)).toBe(1)
  })

  it('reads the queues older releases wrote, oldest first', async () => {
    await writeLegacyData(backend, { token: '', values: {}, logs: {}, queues: { 'wh-buffer:ns:w1': [{ id: 'a' }, 2] } })
    expect(await backend.legacyQueues.items('wh-buffer:ns:w1')).toEqual([{ id: 'a' }, 2])
    expect(await backend.legacyQueues.items('wh-buffer:ns:none')).toEqual([])
  })

  it('gives a lease to one owner at a time and lets it renew', async () => {
    expect(await backend.leases.acquire('wh-1', 'p1', 5_000)).toBe(true)
    expect(await backend.leases.acquire('wh-1', 'p2', 5_000)).toBe(false)
    expect(await backend.leases.acquire('wh-1', 'p1', 5_000)).toBe(true)
    expect(await backend.leases.owner('wh-1')).toBe('p1')
    await backend.leases.release('wh-1', 'p1')
    expect(await backend.leases.acquire('wh-1', 'p2', 5_000)).toBe(true)
  })

  it('counts atomically', async () => {
    await Promise.all(Array.from({ length: 20 }, () => backend.counters.increment('n')))
    expect(await backend.counters.increment('n', 0)).toBe(20)
  })

  it('counts window hits per subject: only those that fit, with the window just before', async () => {
    const minute = 60_000
    // Far from the real time: these windows are the test's own on a shared Redis.
    const start = Math.floor(Date.UTC(2031, 0, 1) / minute) * minute + Math.floor(Math.random() * 1e6) * minute
    const subject = `auth:203.0.113.{7}:${start}`
    const hit = (at: number, limit = 10) => backend.counters.hit(subject, limit, minute, at)
    // Ten concurrent calls against a limit of 6, in the window's last second: exactly 6 are counted.
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => hit(start + 59_000 + i * 100, 6)))
    expect(burst.filter((hits) => hits.counted)).toHaveLength(6)
    const counted = burst.filter((hits) => hits.counted).map((hits) => hits.current.last)
    const full = { count: 6, first: Math.min(...counted), last: Math.max(...counted) }
    expect(await hit(start + 59_950, 6)).toEqual({
      counted: false,
      current: full,
      previous: { count: 0, first: 0, last: 0 },
      windowStart: start,
    })
    // In the next window the 6 are the previous window's, and count whole until a minute after
    // the first of them: 6 + 4 fit under 10, the 5th does not.
    for (let i = 0; i < 4; i++) expect((await hit(start + minute + 100 + i)).counted).toBe(true)
    expect(await hit(start + minute + 200)).toEqual({
      counted: false,
      current: { count: 4, first: start + minute + 100, last: start + minute + 103 },
      previous: full,
      windowStart: start + minute,
    })
    // A minute after the last of the 6, none of them counts.
    expect(await hit(full.last + minute)).toMatchObject({ counted: true, current: { count: 5 } })
    // A window later with no hit in between: nothing before it counts.
    expect(await hit(start + 3 * minute)).toEqual({
      counted: true,
      current: { count: 1, first: start + 3 * minute, last: start + 3 * minute },
      previous: { count: 0, first: 0, last: 0 },
      windowStart: start + 3 * minute,
    })
    // Another subject (and another window length) counts on its own.
    expect(await backend.counters.hit(`${subject}:other`, 10, minute, start + 3 * minute)).toMatchObject({
      current: { count: 1 },
    })
    expect(await backend.counters.hit(subject, 10, 10_000, start + 3 * minute)).toMatchObject({
      current: { count: 1 },
    })
  })
})

describe('backend on a Redis Cluster', () => {
  let backend: Backend
  beforeEach(async () => {
    backend = await makeBackend('cluster')
  })
  afterEach(async () => {
    await backend.close()
  })

  it('refuses, before writing anything, a transaction over keys of different hash tags', async () => {
    await expect(
      backend.keyValue.transact(['ns:{a}:doc', 'ns:{b}:doc'], () => ({
        writes: { set: { 'ns:{a}:doc': 1, 'ns:{b}:doc': 2 } },
        result: null,
      })),
    ).rejects.toThrow(CrossSlotError)
    expect(await backend.keyValue.getMany(['ns:{a}:doc', 'ns:{b}:doc'])).toEqual([null, null])
  })

  it('runs a transaction over several keys, logs included, of one hash tag', async () => {
    await backend.keyValue.transact(['ns:{a}:x', 'ns:{a}:y'], () => ({
      writes: { set: { 'ns:{a}:x': 1, 'ns:{a}:y': 2 }, logs: { 'ns:{a}:audit': ['entry'] } },
      result: null,
    }))
    expect(await backend.keyValue.getMany(['ns:{a}:x', 'ns:{a}:y'])).toEqual([1, 2])
    expect((await backend.logs.range('ns:{a}:audit', { limit: 5 })).map((entry) => entry.value)).toEqual(['entry'])
  })
})
