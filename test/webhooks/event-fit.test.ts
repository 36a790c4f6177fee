import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { describe, expect, it } from 'vitest'
import { buildWebhookEventsSchema } from '../../server/events/json-schema'
import type { NamespaceEvent } from '../../server/events/schemas'
import { envelope, envelopeBytes, MAX_EVENT_BYTES, takeBatch } from '../../server/webhooks/protocol/batching'
import { fitEvent } from '../../server/webhooks/protocol/event-fit'
import { deliveredEvent, deliveredUtf8, rememberedDelivered } from '../../server/webhooks/protocol/delivered-event'
import { bigFirewallConfig } from './support/big-config'

/** 512 KB per delivery (spec 6.2 and 8): an event past it goes out cut, and no body is ever larger. */

const LIMIT = 512 * 1024
const ajv = new Ajv2020({ allErrors: true, strict: true })
addFormats(ajv)
const validate = ajv.compile(buildWebhookEventsSchema('http://localhost:3000'))
const schemaErrors = (body: string) =>
  validate(JSON.parse(body)) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)

let seq = 0
const event = (type: NamespaceEvent['type'], data: Record<string, unknown>): NamespaceEvent => ({
  id: `evt-0mwxk099k${String(++seq).padStart(16, '0')}`,
  type,
  time: '2026-11-26T12:00:00.000Z',
  namespace: 'acme',
  data,
})

const configEvent = (kb: number) =>
  event('config.firewall.updated', {
    firewall: 'main',
    version: 7,
    ecosystem: 'npm',
    actor: { userId: 'owner', requestId: 'req-1' },
    config: bigFirewallConfig(kb),
  })

const ping = (bytes = 10) =>
  event('audit.test.ping', { action: 'test.ping', outcome: 'success', statusCode: 200, requestId: 'x'.repeat(bytes) })

describe('an event past the delivery limit', () => {
  it('goes out cut, flagged payloadTruncated, within 512 KB and valid against the served schema', async () => {
    const big = configEvent(805)
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(800 * 1024)
    const { body } = await envelope([big])
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(LIMIT)
    // Cut close to the limit, not to nothing.
    expect(Buffer.byteLength(body)).toBeGreaterThan(LIMIT - 4 * 1024)
    expect(schemaErrors(body)).toEqual([])
    const [sent] = JSON.parse(body).events
    expect(sent).toMatchObject({
      id: big.id,
      type: big.type,
      time: big.time,
      namespace: 'acme',
      payloadTruncated: true,
    })
    expect(Object.keys(sent.data)).toEqual(['firewall', 'version', 'ecosystem', 'actor', 'config'])
    expect(sent.data).toMatchObject({ firewall: 'main', version: 7, ecosystem: 'npm' })
    // The leading rules stay whole; the input is not changed.
    expect(sent.data.config.rules[0]).toEqual((big.data.config as { rules: unknown[] }).rules[0])
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(800 * 1024)
  })

  it('leaves an event that fits untouched, without the flag', async () => {
    const small = ping()
    expect((await fitEvent(small, MAX_EVENT_BYTES)).event).toBe(small)
    expect((await envelope([small])).body).toBe(JSON.stringify({ version: 1, events: [small] }))
  })

  it('cuts strings, arrays and records of any shape within the bound, characters never split', async () => {
    const shapes: Record<string, unknown>[] = [
      { message: 'é'.repeat(600_000) },
      { message: '😀'.repeat(300_000) },
      { quotes: '"\\\n'.repeat(300_000) },
      { list: Array.from({ length: 200_000 }, (_, i) => i) },
      { many: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`key-${i}`, 'v'.repeat(10)])) },
      { deep: { a: { b: { c: ['x'.repeat(700_000)] } } }, keep: 1, flag: true, nothing: null },
    ]
    for (const data of shapes) {
      const { event: cut, json } = await fitEvent(event('audit.test.big', data), 64 * 1024)
      expect(Buffer.byteLength(json)).toBeLessThanOrEqual(64 * 1024)
      expect(json).toBe(JSON.stringify(cut))
      expect(cut.payloadTruncated).toBe(true)
      expect(json).not.toMatch(/\\ud[89ab][0-9a-f]{2}"/)
    }
  })
})

describe('the cut of an oversized event', () => {
  it('is made once: later bodies of the same event (another attempt, a record read) reuse it', async () => {
    const big = configEvent(805)
    const first = await envelope([big])
    // The same event as read again from the log: another object, the same content.
    const again = await envelope([structuredClone(big)])
    expect(again.envelope.events[0]).toBe(first.envelope.events[0])
    expect(again.body).toBe(first.body)
    // Another event under the same id is never served that cut.
    const other = { ...big, data: { ...big.data, firewall: 'other' } }
    expect(JSON.parse((await envelope([other])).body).events[0].data.firewall).toBe('other')
  })
})

describe('the JSON of an event every webhook delivers', () => {
  it('is written once per event object: the batches of 100 webhooks share it, exactly JSON.stringify', async () => {
    const shared = ping(100)
    const bodies = await Promise.all(Array.from({ length: 100 }, () => envelope([shared])))
    expect(rememberedDelivered(shared, MAX_EVENT_BYTES)?.fitted.json).toBe(JSON.stringify(shared))
    for (const body of bodies) expect(body.body).toBe(`{"version":1,"events":[${JSON.stringify(shared)}]}`)
    // The same id and another content (another object): its own JSON, never the first one's.
    const other = { ...shared, data: { ...shared.data, statusCode: 500 } }
    expect((await deliveredEvent(other, MAX_EVENT_BYTES)).json).toBe(JSON.stringify(other))
  })

  it('goes into every body as bytes encoded once: the body is the envelope, byte for byte', async () => {
    const shared = ping(100)
    const others = [ping(20 * 1024), ping(300 * 1024), configEvent(5), { ...ping(3), data: { text: 'ünïcödé ✓ 𝄞' } }]
    const batches = [[shared], [shared, ...others], [others[2], shared, others[3]], []]
    for (const batch of batches)
      expect((await envelopeBytes(batch)).equals(Buffer.from((await envelope(batch)).body))).toBe(true)
    const kept = rememberedDelivered(shared, MAX_EVENT_BYTES)!
    expect(deliveredUtf8(kept)).toBe(deliveredUtf8(kept))
    expect(deliveredUtf8(kept).toString()).toBe(JSON.stringify(shared))
  })

  it('is not kept with an event past 16 KB, which would hold a second copy of itself while it waits', async () => {
    const large = ping(20 * 1024)
    expect((await deliveredEvent(large, MAX_EVENT_BYTES)).json).toBe(JSON.stringify(large))
    expect(rememberedDelivered(large, MAX_EVENT_BYTES)).toBeUndefined()
  })
})

describe('batching against 512 KB', () => {
  it('never builds a body over 512 KB, an oversized event included, and keeps every event in order', async () => {
    const events = [ping(), ping(300 * 1024), configEvent(805), ping(), ping(260 * 1024), ping(260 * 1024), ping()]
    const bodies: string[] = []
    let rest = events
    while (rest.length > 0) {
      const batch = await takeBatch(rest)
      bodies.push((await envelope(batch)).body)
      rest = rest.slice(batch.length)
    }
    for (const body of bodies) {
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(LIMIT)
      expect(schemaErrors(body)).toEqual([])
    }
    expect(bodies.flatMap((body) => JSON.parse(body).events.map((e: { id: string }) => e.id))).toEqual(
      events.map((e) => e.id),
    )
    // The cut event travels alone: the one before and the one after do not fit beside it.
    expect(bodies.map((body) => JSON.parse(body).events.length)).toEqual([2, 1, 2, 2])
  })
})
