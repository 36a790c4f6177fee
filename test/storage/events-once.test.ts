import { afterEach, describe, expect, it } from 'vitest'
import { BACKEND_KINDS, clusterNodes, makeBackend, type BackendKind } from '../support/backends'
import { redisUrl, uniquePrefix } from '../support/redis'
import { readLegacyFixture, writeLegacyData, type LegacyFixture } from '../support/legacy-events'
import { createBackend, type Backend } from '../../storage'
import { createServices } from '../../server/app/services'
import { keys, webhookKeys } from '../../storage/repositories/keys'
import { compareCursors } from '../../storage/repositories/event-log'
import { migrateStorage, STORAGE_LAYOUT } from '../../storage/migrations'
import { storeEventsOnce } from '../../storage/migrations/events-once'
import { moveToHashTags } from '../../storage/migrations/hash-tags'
import { routes } from '../../server/webhooks/delivery/routing'
import type { NamespaceEvent } from '../../server/events/schemas'

type Event = NamespaceEvent

/** What the fixture says each webhook was owed, read from the old layout's own keys. */
function owedByFixture(fixture: LegacyFixture) {
  const webhooks = Object.entries(fixture.values)
    .filter(([key]) => /^ns:default:wh:[^:]+$/.test(key))
    .map(([, doc]) => doc as { id: string; name: string })
  const id = (name: string) => webhooks.find((webhook) => webhook.name === name)!.id
  const routed = (fixture.values['wh-router-cursor'] as { cursor: string }).cursor
  const unrouted = fixture.logs.events
    .filter((entry) => compareCursors(entry.id, routed) > 0)
    .map((entry) => entry.value as Event)
    .filter((event) => event.type === 'audit.team.create')
    .map((event) => event.id)
  const batch = fixture.values[`ns:default:wh-batch:${id('stalled')}`] as { deliveryId: string; items: Event[] }
  const buffer = fixture.queues[`wh-buffer:default:${id('stalled')}`] as Event[]
  return { steadyId: id('steady'), stalledId: id('stalled'), unrouted, batch, buffer }
}

/** The new engine's view of one webhook: its batch, and the matching events after its cursor. */
async function bufferOf(backend: Backend, id: string) {
  const services = createServices(backend)
  const cursor = await services.webhooks.cursors.get('default', id)
  const webhook = (await services.webhooks.get('default', id))!
  const after = await services.events.read('default', cursor!.cursor, 1000)
  return {
    batch: cursor!.batch && { deliveryId: cursor!.batch.deliveryId, eventIds: cursor!.batch.eventIds },
    batchEvents: cursor!.batch
      ? (await services.events.read('default', cursor!.batch.after, 1000))
          .filter((entry) => compareCursors(entry.cursor, cursor!.batch!.last) <= 0)
          .filter((entry) => cursor!.batch!.eventIds.includes(entry.value.id))
          .map((entry) => entry.value.id)
      : [],
    buffered: after.filter((entry) => routes(entry.value, webhook)).map((entry) => entry.value.id),
  }
}

const legacyKeys = async (backend: Backend) =>
  (await backend.keyValue.keys('')).filter((key) =>
    /^(log:events|queue:wh-buffer|wh-router-cursor|lease:webhook-router)|:wh-batch:/.test(key),
  )

describe.each(BACKEND_KINDS)('events stored once: migrating the old event layout (%s)', (kind: BackendKind) => {
  const opened: Backend[] = []
  const open = async () => {
    const backend = await makeBackend(kind)
    opened.push(backend)
    return backend
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()))
  })
  const fixture = readLegacyFixture()
  const owed = owedByFixture(fixture)

  it('moves the global log into the namespace log and gives each webhook what it was owed', async () => {
    const backend = await open()
    const now = Date.now()
    await writeLegacyData(backend, fixture, now)
    expect(await legacyKeys(backend)).not.toEqual([])
    const outcome = await migrateStorage(backend)
    expect(outcome).toEqual({
      from: 1,
      to: STORAGE_LAYOUT,
      ran: ['hash-tags', 'events-once', 'namespace-index', 'delivery-index-pages'],
    })

    // The stalled webhook: its batch in flight under its delivery id, then its buffer (with the
    // overflow notice only the buffer held), then what the router had not routed yet.
    const stalled = await bufferOf(backend, owed.stalledId)
    expect(stalled.batch).toEqual({
      deliveryId: owed.batch.deliveryId,
      eventIds: owed.batch.items.map((event) => event.id),
    })
    expect(stalled.batchEvents).toEqual(owed.batch.items.map((event) => event.id))
    expect(stalled.buffered).toEqual([...owed.buffer.map((event) => event.id), ...owed.unrouted])
    expect(owed.buffer.map((event) => event.type)).toContain('webhook.rate_limited')
    expect(owed.unrouted).toHaveLength(2)
    // The steady webhook had delivered everything routed: only the unrouted events are left.
    const steady = await bufferOf(backend, owed.steadyId)
    expect(steady).toEqual({ batch: null, batchEvents: [], buffered: owed.unrouted })

    // Every event once, in the global order, the notice after its buffer predecessor; dated as before.
    const log = await backend.logs.range<Event>(keys.eventLog('default'), { limit: 1000 })
    const notice = owed.buffer.find((event) => event.type === 'webhook.rate_limited')!
    const expected = fixture.logs.events.map((entry) => (entry.value as Event).id)
    const predecessor = owed.buffer[owed.buffer.indexOf(notice) - 1].id
    expected.splice(expected.indexOf(predecessor) + 1, 0, notice.id)
    expect(log.map((entry) => entry.value.id)).toEqual(expected)
    const newest = Math.max(...fixture.logs.events.map((entry) => Number(entry.id.split('-')[0])))
    const timeOf = new Map(
      fixture.logs.events.map((entry) => [(entry.value as Event).id, Number(entry.id.split('-')[0]) + now - newest]),
    )
    for (const entry of log) if (timeOf.has(entry.value.id)) expect(entry.time).toBe(timeOf.get(entry.value.id))

    expect(await legacyKeys(backend)).toEqual([])
    expect(await migrateStorage(backend)).toEqual({ from: STORAGE_LAYOUT, to: STORAGE_LAYOUT, ran: [] })
  })

  it('repeats a run interrupted after the logs were written, or while the old keys were removed', async () => {
    const reference = await open()
    await writeLegacyData(reference, fixture)
    await migrateStorage(reference)
    const expected = {
      stalled: await bufferOf(reference, owed.stalledId),
      steady: await bufferOf(reference, owed.steadyId),
    }

    for (const failing of ['set', 'delete'] as const) {
      const backend = await open()
      await writeLegacyData(backend, fixture)
      await moveToHashTags(backend)
      // The namespace log holds part of the events already, as an interrupted append leaves it.
      const partial = fixture.logs.events.slice(0, 5).map((entry) => entry.value as Event)
      if (failing === 'set') await backend.logs.append(keys.eventLog('default'), partial)
      const interrupted = failOnce(
        backend,
        failing === 'set' ? 'set' : 'delete',
        failing === 'set' ? ':wh-cursor:' : '',
      )
      await expect(storeEventsOnce(interrupted)).rejects.toThrow('interrupted')
      await storeEventsOnce(backend)
      expect(await bufferOf(backend, owed.stalledId)).toEqual(expected.stalled)
      expect(await bufferOf(backend, owed.steadyId)).toEqual(expected.steady)
      const ids = (await backend.logs.range<Event>(keys.eventLog('default'), { limit: 1000 })).map((e) => e.value.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(await legacyKeys(backend)).toEqual([])
    }
  })
})

/** The backend, but the first `method` call on a key containing `part` throws (a process dying there). */
function failOnce(backend: Backend, method: 'set' | 'delete', part: string): Backend {
  let failed = false
  const keyValue = new Proxy(backend.keyValue, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (property !== method) return typeof value === 'function' ? value.bind(target) : value
      return (key: string, ...rest: unknown[]) => {
        if (!failed && key.includes(part)) {
          failed = true
          throw new Error('interrupted')
        }
        return (value as (...args: unknown[]) => unknown).call(target, key, ...rest)
      }
    },
  })
  return new Proxy(backend, {
    get(target, property, receiver) {
      if (property === 'keyValue') return keyValue
      const value = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

describe.each(['redis', 'cluster'] as const)('events-once migration with processes starting at once (%s)', (kind) => {
  const opened: Backend[] = []
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()))
  })

  it('one process converts the old event layout, the others wait; every event is in the log once', async () => {
    const prefix = uniquePrefix('events-once')
    const target = kind === 'redis' ? { redisUrl: await redisUrl() } : { redisClusterNodes: clusterNodes() }
    const backends = await Promise.all(
      Array.from({ length: 3 }, () => createBackend({ ...target, redisPrefix: prefix })),
    )
    opened.push(...backends)
    const fixture = readLegacyFixture()
    await writeLegacyData(backends[0], fixture)
    const outcomes = await Promise.all(
      backends.map((backend, i) => migrateStorage(backend, { owner: `p${i}`, pollMs: 20 })),
    )
    expect(outcomes.filter((outcome) => outcome.ran.includes('events-once'))).toHaveLength(1)
    const ids = (await backends[1].logs.range<Event>(keys.eventLog('default'), { limit: 1000 })).map((e) => e.value.id)
    expect(ids).toHaveLength(fixture.logs.events.length + 1)
    expect(new Set(ids).size).toBe(ids.length)
    const owed = owedByFixture(fixture)
    expect((await bufferOf(backends[2], owed.stalledId)).buffered).toEqual([
      ...owed.buffer.map((event) => event.id),
      ...owed.unrouted,
    ])
  })
})

/** Hand-made old-layout storage for the cases one captured run does not show. */
function edgeCases(): LegacyFixture {
  const event = (id: string, second: number): Event => ({
    id,
    type: 'audit.team.create',
    time: `2026-12-01T00:00:0${second}.000Z`,
    namespace: 'default',
    data: { action: 'team.create', outcome: 'success', statusCode: 201 },
  })
  const notice = (id: string, webhook: string): Event => ({
    id,
    type: 'webhook.rate_limited',
    time: '2026-12-01T00:00:09.000Z',
    namespace: 'default',
    data: { webhook, reason: 'buffer_overflow', droppedEvents: 1, bufferedEvents: 3 },
  })
  const doc = (id: string) => ({
    id,
    namespace: 'default',
    name: id,
    url: 'http://127.0.0.1:9/hook',
    enabled: true,
    eventTypes: ['audit.team.create'],
    firewalls: [],
    secret: 'whsec_Hl/AopiDObBshs3FygvU8kllQhP6z4dh3ouFsbUMFMk=',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  })
  const e = [1, 2, 3, 4, 5, 6].map((n) => event(`e${n}`, n))
  return {
    token: '',
    values: {
      'wh-all': { items: { 'default/wh-a': true, 'default/wh-b': true, 'default/wh-d': true } },
      'ns:default:wh:wh-a': doc('wh-a'),
      'ns:default:wh:wh-b': doc('wh-b'),
      'ns:default:wh:wh-d': doc('wh-d'),
      // wh-b's batch in flight; wh-c was deleted, its batch and buffer left behind.
      'ns:default:wh-batch:wh-b': { deliveryId: 'whdel-b', items: [e[1]] },
      'ns:default:wh-batch:wh-c': { deliveryId: 'whdel-c', items: [e[0]] },
      // The router had routed up to e4; e5 reached wh-a's buffer in a pass that died before saving that.
      'wh-router-cursor': { cursor: '1004-0' },
    },
    logs: { events: e.map((value, i) => ({ id: `${1001 + i}-0`, value })) },
    queues: {
      // x0: trimmed from the global log past retention; e4 twice: a repeated router pass.
      'wh-buffer:default:wh-a': [event('x0', 0), e[2], e[3], e[3], e[4], notice('n-a', 'wh-a')],
      // An overflow notice heading a buffer.
      'wh-buffer:default:wh-b': [notice('n-b', 'wh-b'), e[3]],
      'wh-buffer:default:wh-c': [e[5]],
    },
  }
}

describe.each(BACKEND_KINDS)('events stored once: cases the captured run does not show (%s)', (kind) => {
  const opened: Backend[] = []
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()))
  })

  it('places notices by their buffer neighbours, drops what the log lost, sends nothing twice, forgets deleted webhooks', async () => {
    const backend = await makeBackend(kind)
    opened.push(backend)
    await writeLegacyData(backend, edgeCases())
    await migrateStorage(backend)
    const log = await backend.logs.range<Event>(keys.eventLog('default'), { limit: 100 })
    expect(log.map((entry) => entry.value.id)).toEqual(['e1', 'e2', 'e3', 'n-b', 'e4', 'e5', 'n-a', 'e6'])
    expect(await bufferOf(backend, 'wh-a')).toEqual({
      batch: null,
      batchEvents: [],
      buffered: ['e3', 'e4', 'e5', 'n-a', 'e6'],
    })
    expect(await bufferOf(backend, 'wh-b')).toEqual({
      batch: { deliveryId: 'whdel-b', eventIds: ['e2'] },
      batchEvents: ['e2'],
      buffered: ['n-b', 'e4', 'e5', 'e6'],
    })
    // Nothing buffered: from the last routed entry on.
    expect(await bufferOf(backend, 'wh-d')).toEqual({ batch: null, batchEvents: [], buffered: ['e5', 'e6'] })
    expect(await backend.keyValue.get(webhookKeys.cursor('default', 'wh-c'))).toBeNull()
    expect(await legacyKeys(backend)).toEqual([])
  })
})
