import { afterEach, describe, expect, it } from 'vitest'
import { createUser } from '../../server/namespace/directory'
import { keys } from '../../storage/repositories/keys'
import { NS, receiptProblems, startHarness, T0, type Harness } from './support/harness'

/** Resend and recover (#14) against a real receiver, on the event-log design. */

let h: Harness
afterEach(async () => h?.close())

const base = (id: string) => `/v1/${NS}/webhooks/${id}`
const ids = (index: number) => h.receiver.receipts[index].json.events.map((e) => e.id)
const webhookId = (index: number) => String(h.receiver.receipts[index].headers['webhook-id'])

describe('resend', () => {
  it('sends the same events under a new webhook-id at the back of the queue, keeping order with what waited then', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    h.receiver.reply = (_r, i) => ({ status: i === 1 ? 500 : 200 })
    const first = await h.appendEvents(2)
    await h.runFor(1_000)
    const [third] = await h.appendEvents(1)
    await h.runFor(1_000)
    // The third event's delivery waits 30 s for its retry; a fourth event waits behind it.
    const [fourth] = await h.appendEvents(1)
    await h.idle()

    const resent = await h.api('POST', `${base(webhook.id)}/deliveries/${webhookId(0)}/resend`)
    expect(resent.status).toBe(202)
    expect(resent.body).toMatchObject({
      status: 'retrying',
      attempts: 0,
      eventCount: 2,
      eventTypes: ['audit.test.ping'],
      test: false,
    })
    expect(resent.body.id).toMatch(/^whdel-/)
    expect(resent.body.id).not.toBe(webhookId(0))
    const [fifth] = await h.appendEvents(1)
    await h.runUntil(T0 + 60_000)

    expect(h.receiver.receipts.slice(2).map((_, i) => ids(i + 2))).toEqual([
      [third.id],
      [fourth.id],
      first.map((e) => e.id),
      [fifth.id],
    ])
    expect(webhookId(4)).toBe(resent.body.id)
    expect(receiptProblems(h.receiver)).toEqual([])
    const record = (await h.api('GET', `${base(webhook.id)}/deliveries/${resent.body.id}`)).body
    expect(record).toMatchObject({ status: 'success', attempts: 1, eventCount: 2 })
    expect((await h.api('GET', `${base(webhook.id)}/deliveries/${resent.body.id}/attempts`)).body).toHaveLength(1)
    // A resend can itself be resent.
    const again = await h.api('POST', `${base(webhook.id)}/deliveries/${resent.body.id}/resend`)
    expect(again.status).toBe(202)
    await h.runFor(5_000)
    expect(ids(6)).toEqual(first.map((e) => e.id))
  })

  it('needs ns:webhooks:manage, answers 404 for an unknown delivery and 409 once the log lost the events', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    await h.appendEvents(1)
    await h.runFor(1_000)
    const reader = await createUser(h.services, NS, 'reader')
    const denied = await h.api('POST', `${base(webhook.id)}/deliveries/${webhookId(0)}/resend`, undefined, reader)
    expect(denied.status).toBe(403)
    expect((await h.api('POST', `${base(webhook.id)}/deliveries/whdel-nothere/resend`)).status).toBe(404)
    await h.services.retainedLogs.trimBefore(keys.eventLog(NS), Date.now() + 1_000)
    const gone = await h.api('POST', `${base(webhook.id)}/deliveries/${webhookId(0)}/resend`)
    expect(gone.status).toBe(409)
    expect(gone.body.code).toBe('events_unavailable')
    expect(gone.body.detail).toContain(h.receiver.receipts[0].json.events[0].id)
  })
})

describe('recover', () => {
  it('re-queues the events of failed deliveries in the window, delivered once the quarantine ends', async () => {
    h = await startHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '1s' } })
    const webhook = await h.createWebhook()
    h.receiver.reply = (_r, i) => ({ status: i < 2 ? 500 : 200 })
    const events = await h.appendEvents(2)
    await h.runFor(5_000)
    expect((await h.api('GET', `${base(webhook.id)}/state`)).body.state).toBe('quarantined')

    const outside = await h.api('POST', `${base(webhook.id)}/recover`, {
      since: new Date(T0 - 60_000).toISOString(),
      until: new Date(T0 - 1_000).toISOString(),
    })
    expect(outside).toMatchObject({ status: 202, body: { count: 0 } })
    expect((await h.api('POST', `${base(webhook.id)}/recover`, { since: 'yesterday' })).status).toBe(400)
    const backwards = await h.api('POST', `${base(webhook.id)}/recover`, {
      since: new Date(T0 - 1_000).toISOString(),
      until: new Date(T0 - 60_000).toISOString(),
    })
    expect(backwards).toMatchObject({ status: 400, body: { code: 'invalid_range', errors: [{ path: 'until' }] } })
    const future = await h.api('POST', `${base(webhook.id)}/recover`, { since: new Date(T0 + 3_600_000).toISOString() })
    expect(future).toMatchObject({ status: 400, body: { code: 'invalid_range', errors: [{ path: 'since' }] } })
    const recovered = await h.api('POST', `${base(webhook.id)}/recover`, { since: new Date(T0 - 60_000).toISOString() })
    expect(recovered).toMatchObject({ status: 202, body: { count: 2 } })
    expect(recovered.body.unavailable).toBeUndefined()
    // Quarantine applies: nothing goes out until it is released.
    await h.runFor(60_000)
    expect(h.receiver.receipts).toHaveLength(2)
    expect((await h.api('GET', `${base(webhook.id)}/state`)).body).toMatchObject({
      state: 'quarantined',
      bufferedEvents: 2,
    })
    expect((await h.api('POST', `${base(webhook.id)}/release`)).status).toBe(200)
    await h.runFor(5_000)
    expect(h.receiver.receipts).toHaveLength(3)
    expect(ids(2)).toEqual(events.map((e) => e.id))
    expect(webhookId(2)).not.toBe(webhookId(0))
    expect(receiptProblems(h.receiver)).toEqual([])
  })

  it('names the events the log no longer holds', async () => {
    h = await startHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '1s' } })
    const webhook = await h.createWebhook()
    h.receiver.reply = () => ({ status: 500 })
    const events = await h.appendEvents(2)
    await h.runFor(5_000)
    await h.services.retainedLogs.trimBefore(keys.eventLog(NS), Date.now() + 1_000)
    const answer = await h.api('POST', `${base(webhook.id)}/recover`, { since: new Date(T0 - 60_000).toISOString() })
    expect(answer).toMatchObject({ status: 202, body: { count: 0, unavailable: events.map((e) => e.id) } })
  })
})
