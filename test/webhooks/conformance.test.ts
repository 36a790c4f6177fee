import { afterEach, describe, expect, it } from 'vitest'
import { NS, receiptProblems, startHarness, T0, type Harness } from './support/harness'

/** Fixes from the conformance review (#14): test sends alone, disabled webhooks stop draining. */

let h: Harness
afterEach(async () => h?.close())

const records = async (id: string) =>
  (await h.api('GET', `/v1/${NS}/webhooks/${id}/deliveries`)).body as {
    id: string
    test: boolean
    eventTypes: string[]
    eventCount: number
  }[]
const state = async (id: string) => (await h.api('GET', `/v1/${NS}/webhooks/${id}/state`)).body

describe('a test send is its own delivery', () => {
  it('never shares a batch with real events queued before or after it', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    h.receiver.reply = (_r, i) => ({ status: i === 0 ? 500 : 200 })
    await h.appendEvents(2)
    await h.runFor(1_000)
    // While the first batch waits for its retry: one event, a test send, one more event.
    const [third] = await h.appendEvents(1)
    expect((await h.api('POST', `/v1/${NS}/webhooks/${webhook.id}/test`)).status).toBe(202)
    const [fourth] = await h.appendEvents(1)
    await h.runUntil(T0 + 60_000)

    const bodies = h.receiver.receipts.slice(1).map((r) => r.json.events.map((e) => e.type))
    expect(bodies).toEqual([
      ['audit.test.ping', 'audit.test.ping'],
      ['audit.test.ping'],
      ['webhook.test'],
      ['audit.test.ping'],
    ])
    expect(h.receiver.receipts[2].json.events[0].id).toBe(third.id)
    expect(h.receiver.receipts[4].json.events[0].id).toBe(fourth.id)
    // Records in the order of delivery (ids made in the same stepped millisecond do not sort by time).
    const byId = new Map((await records(webhook.id)).map((r) => [r.id, r]))
    const saved = [0, 2, 3, 4].map((i) => byId.get(String(h.receiver.receipts[i].headers['webhook-id']))!)
    expect(saved.map((r) => r.test)).toEqual([false, false, true, false])
    expect(saved[2]).toMatchObject({ eventCount: 1, eventTypes: ['webhook.test'] })
    expect(receiptProblems(h.receiver)).toEqual([])
  })
})

describe('a disabled webhook', () => {
  it('stops draining, retries included; its events stay until it is enabled, then go out in order', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    const body = { name: 'receiver', url: h.receiver.url, eventTypes: ['audit.test.*'] }
    h.receiver.reply = (_r, i) => ({ status: i === 0 ? 500 : 200 })
    // One batch fails and waits for its retry; more events queue behind it (100 per delivery).
    const events = await h.appendEvents(150)
    await h.runFor(1_000)
    expect(h.receiver.receipts).toHaveLength(1)

    expect((await h.api('PUT', `/v1/${NS}/webhooks/${webhook.id}`, { ...body, enabled: false })).status).toBe(200)
    await h.runFor(3_600_000)
    expect(h.receiver.receipts).toHaveLength(1)
    expect(await state(webhook.id)).toMatchObject({ state: 'disabled', bufferedEvents: 150 })
    // Events appended while disabled never enter the buffer.
    await h.appendEvents(5)
    await h.runFor(1_000)
    expect(await state(webhook.id)).toMatchObject({ state: 'disabled', bufferedEvents: 150 })
    // A restart reads the buffer again from the log: the waiting events are still there.
    await h.engine.stop()
    await h.startEngine()
    await h.runFor(1_000)
    expect(h.receiver.receipts).toHaveLength(1)
    expect(await state(webhook.id)).toMatchObject({ state: 'disabled', bufferedEvents: 150 })

    expect((await h.api('PUT', `/v1/${NS}/webhooks/${webhook.id}`, { ...body, enabled: true })).status).toBe(200)
    await h.runFor(5_000)
    const ids = h.receiver.receipts.slice(1).flatMap((r) => r.json.events.map((e) => e.id))
    expect(ids).toEqual(events.map((e) => e.id))
    expect(h.receiver.receipts[1].headers['webhook-id']).toBe(h.receiver.receipts[0].headers['webhook-id'])
    expect(await state(webhook.id)).toEqual({ state: 'active', bufferedEvents: 0 })
  })

  it('takes nothing from a backlog once disabled between two deliveries', async () => {
    h = await startHarness({ env: { WEBHOOK_RATE: '1' } })
    const webhook = await h.createWebhook()
    const body = { name: 'receiver', url: h.receiver.url, eventTypes: ['audit.test.*'] }
    await h.appendEvents(300)
    await h.runFor(500)
    expect(h.receiver.receipts).toHaveLength(1)
    // Paced to one delivery per second: disabled before the second one may start.
    await h.api('PUT', `/v1/${NS}/webhooks/${webhook.id}`, { ...body, enabled: false })
    await h.runFor(10_000)
    expect(h.receiver.receipts).toHaveLength(1)
    expect(await state(webhook.id)).toMatchObject({ state: 'disabled', bufferedEvents: 200 })
  })
})
