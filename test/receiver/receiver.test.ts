import { afterAll, describe, expect, it } from 'vitest'
import Redis from 'ioredis'
import { createReceiver, MemoryStore, RedisStore, retryLater, type Event } from '../../receiver'
import { redisUrl, uniquePrefix } from '../support/redis'
import { envelope, firewallEvent, newSecret, signedHeaders } from './support'

const secret = newSecret()

/** A receiver whose application records what it handled; `failOn` makes one event's handler throw. */
function app(options: { store?: MemoryStore | RedisStore; failOn?: (event: Event) => unknown } = {}) {
  const handled: string[] = []
  const errors: string[] = []
  const receiver = createReceiver({
    secrets: [secret],
    store: options.store,
    onEvent(event) {
      const failure = options.failOn?.(event)
      if (failure) throw failure
      handled.push(event.id)
    },
    onError: (error, event) => errors.push(`${(error as Error).message} at ${event.id}`),
  })
  return { receiver, handled, errors }
}

function delivery(events: object[], id?: string) {
  const body = envelope(events)
  return { body, headers: signedHeaders(body, [secret], id) }
}

describe('createReceiver', () => {
  it('handles every event in order and answers 200, then skips the same delivery retried', async () => {
    const { receiver, handled } = app()
    const events = [firewallEvent(), firewallEvent(), firewallEvent()]
    const request = delivery(events)
    const first = await receiver.receive(request)
    expect([first.status, JSON.parse(first.body)]).toEqual([200, { handled: 3, skipped: 0, duplicate: false }])
    const again = await receiver.receive(request)
    expect([again.status, JSON.parse(again.body).duplicate]).toEqual([200, true])
    expect(handled).toEqual(events.map((e) => e.id))
  })

  it('answers 500 when a handler throws, and the retry handles only the rest of the batch', async () => {
    let broken = true
    const events = [firewallEvent(), firewallEvent(), firewallEvent(), firewallEvent()]
    const { receiver, handled, errors } = app({
      failOn: (e) => broken && e.id === events[2].id && new Error('db down'),
    })
    const request = delivery(events, 'whdel-retry')
    const failed = await receiver.receive(request)
    expect([failed.status, JSON.parse(failed.body).code]).toEqual([500, 'handler_failed'])
    expect(failed.body).not.toContain('db down')
    expect(errors).toEqual([`db down at ${events[2].id}`])
    expect(handled).toEqual([events[0].id, events[1].id])
    broken = false
    // The retry: same webhook-id, same events, a new timestamp and signature.
    const retried = await receiver.receive(delivery(events, 'whdel-retry'))
    expect(JSON.parse(retried.body)).toEqual({ handled: 2, skipped: 2, duplicate: false })
    expect(handled).toEqual(events.map((e) => e.id))
  })

  it('skips events already handled when they come again in another delivery (a resend)', async () => {
    const { receiver, handled } = app()
    const [a, b] = [firewallEvent(), firewallEvent()]
    await receiver.receive(delivery([a]))
    const answer = await receiver.receive(delivery([a, b]))
    expect(JSON.parse(answer.body)).toEqual({ handled: 1, skipped: 1, duplicate: false })
    expect(handled).toEqual([a.id, b.id])
  })

  it('pushes back with 429 or 503 and Retry-After when a handler throws retryLater', async () => {
    const events = [firewallEvent(), firewallEvent()]
    let status: 429 | 503 = 429
    const { receiver, handled, errors } = app({ failOn: (e) => e.id === events[1].id && retryLater(30, status) })
    const answer = await receiver.receive(delivery(events))
    expect([answer.status, answer.headers['retry-after'], JSON.parse(answer.body).code]).toEqual([
      429,
      '30',
      'receiver_busy',
    ])
    status = 503
    expect((await receiver.receive(delivery(events))).status).toBe(503)
    expect(handled).toEqual([events[0].id])
    expect(errors).toEqual([])
    expect(() => retryLater(1.5)).toThrow(RangeError)
  })

  it('pushes back before handling anything while `busy` says so', async () => {
    let busy: number | null = 12
    const handled: string[] = []
    const receiver = createReceiver({ secrets: secret, busy: () => busy, onEvent: (e) => void handled.push(e.id) })
    const request = delivery([firewallEvent()])
    const refused = await receiver.receive(request)
    expect([refused.status, refused.headers['retry-after']]).toEqual([503, '12'])
    busy = null
    expect((await receiver.receive(request)).status).toBe(200)
    expect(handled).toHaveLength(1)
  })

  it('refuses unverified and unparsable requests with 401/400 problems without calling the handler', async () => {
    const { receiver, handled } = app()
    const request = delivery([firewallEvent()])
    const tampered = await receiver.receive({ ...request, body: request.body.replace('"fw"', '"fx"') })
    const seen = [tampered.status, tampered.headers['content-type'], JSON.parse(tampered.body).code]
    expect(seen).toEqual([401, 'application/problem+json', 'no_matching_signature'])
    const notJson = '{"version":1'
    const invalid = await receiver.receive({ body: notJson, headers: signedHeaders(notJson, [secret]) })
    expect([invalid.status, JSON.parse(invalid.body).code]).toEqual([400, 'invalid_json'])
    expect(handled).toEqual([])
  })

  it('asks a secrets function on every request (secrets changed while running)', async () => {
    let secrets = [newSecret()]
    const receiver = createReceiver({ secrets: () => secrets, onEvent: () => undefined })
    const request = delivery([firewallEvent()])
    expect((await receiver.receive(request)).status).toBe(401)
    secrets = [secrets[0], secret]
    expect((await receiver.receive(request)).status).toBe(200)
  })

  it('answers 503 for a retry that arrives while the same delivery is still being handled here', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const receiver = createReceiver({ secrets: secret, onEvent: () => gate })
    const request = delivery([firewallEvent()])
    const slow = receiver.receive(request)
    const overtaking = await receiver.receive(request)
    expect([overtaking.status, JSON.parse(overtaking.body).code]).toEqual([503, 'delivery_in_progress'])
    release()
    expect((await slow).status).toBe(200)
  })
})

describe('MemoryStore', () => {
  it('forgets marks after their TTL and beyond maxEntries (oldest first)', async () => {
    let now = 0
    const store = new MemoryStore({ now: () => now, maxEntries: 2 })
    await store.mark('a', 10)
    now = 9_999
    expect(await store.has('a')).toBe(true)
    now = 10_000
    expect(await store.has('a')).toBe(false)
    await store.mark('b', 10)
    await store.mark('c', 10)
    await store.mark('d', 10)
    expect([await store.has('b'), await store.has('c'), await store.has('d'), store.size]).toEqual([
      false,
      true,
      true,
      2,
    ])
  })
})

describe('RedisStore', () => {
  const clients: Redis[] = []
  afterAll(async () => {
    for (const client of clients) client.disconnect()
  })

  it('shares marks between receivers (processes, restarts) and sets the TTL', async () => {
    const client = new Redis(await redisUrl())
    clients.push(client)
    const prefix = `${uniquePrefix('recv')}:`
    const events = [firewallEvent(), firewallEvent()]
    const first = app({
      store: new RedisStore({ redis: client, prefix }),
      failOn: (e) => e.id === events[1].id && new Error('killed'),
    })
    await first.receiver.receive(delivery(events, 'whdel-shared'))
    const owned = new RedisStore({ redis: await redisUrl(), prefix })
    const second = app({ store: owned })
    const answer = await second.receiver.receive(delivery(events, 'whdel-shared'))
    expect(JSON.parse(answer.body)).toEqual({ handled: 1, skipped: 1, duplicate: false })
    expect([...first.handled, ...second.handled]).toEqual(events.map((e) => e.id))
    const ttl = await client.ttl(`${prefix}event:${events[0].id}`)
    expect(ttl).toBeGreaterThan(24 * 3600 - 60)
    expect(ttl).toBeLessThanOrEqual(24 * 3600)
    expect(await client.ttl(`${prefix}delivery:whdel-shared`)).toBeGreaterThan(0)
    await owned.close()
    await client.del(...(await client.keys(`${prefix}*`)))
  })

  it('answers 503 with Retry-After while Redis is unreachable, and calls no handler', async () => {
    // Nothing listens on port 1: every command fails at once, as with Redis down.
    const down = new Redis({
      port: 1,
      host: '127.0.0.1',
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    clients.push(down)
    const { receiver, handled } = app({ store: new RedisStore({ redis: down }) })
    const answer = await receiver.receive(delivery([firewallEvent()]))
    expect([answer.status, answer.headers['retry-after'], JSON.parse(answer.body).code]).toEqual([
      503,
      '10',
      'store_unavailable',
    ])
    expect(handled).toEqual([])
  })
})
