import { afterEach, describe, expect, it } from 'vitest'
import { createUser } from '../../server/namespace/directory'
import { keys } from '../../storage/repositories/keys'
import { enterFailed } from '../../storage/repositories/failed-deliveries'
import { REDELIVERIES_KEPT } from '../../server/webhooks/delivery/redelivery'
import { NS, receiptProblems, startHarness, T0, type Harness } from './support/harness'

/** Resend and recover (#14) against a real receiver, on the event-log design. */

let h: Harness
afterEach(async () => h?.close())

const base = (id: string) => `/v1/${NS}/webhooks/${id}`
const ids = (index: number) => h.receiver.receipts[index].json.events.map((e) => e.id)
const webhookId = (index: number) => String(h.receiver.receipts[index].headers['webhook-id'])
/** The audit entries of `action`, newest first. */
const audits = async (action: string) =>
  (await h.services.events.auditPage<{ action: string; outcome: string; statusCode: number }>(NS, null, 500))
    .map((entry) => entry.value)
    .filter((entry) => entry.action === action)

describe('resend', () => {
  it('refuses a resend with 409 redelivery_queue_full while REDELIVERIES_KEPT wait, queueing nothing', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    await h.appendEvents(1)
    await h.runFor(1_000)
    // Due only once the log reaches a position it never reaches here: with `null` (due at once),
    // the head went out as soon as the host reloaded the queue (its periodic pass, on a slow
    // run between this write and the check) and left it, and the check read 999.
    const waiting = Array.from({ length: REDELIVERIES_KEPT }, (_, n) => ({
      deliveryId: `whdel-waiting-${n}`,
      eventIds: ['ev-gone'],
      after: null,
      last: '1-0',
      position: '9999999999999-0',
    }))
    await h.services.webhookRecords.queueRedeliveries(NS, webhook.id, waiting, REDELIVERIES_KEPT)
    const refused = await h.api('POST', `${base(webhook.id)}/deliveries/${webhookId(0)}/resend`)
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ code: 'redelivery_queue_full' })
    expect(await h.services.webhookRecords.listRedeliveries(NS, webhook.id)).toHaveLength(REDELIVERIES_KEPT)
  })

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
    expect((await audits('webhook.delivery.resend')).map((e) => [e.outcome, e.statusCode])).toEqual([
      ['failure', 409],
      ['failure', 404],
      ['failure', 403],
    ])
  })

  it('is paced like any batch: the webhook rateLimit spaces it from the deliveries around it', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook({ rateLimit: 0.5 })
    const [first] = await h.appendEvents(1)
    await h.runFor(500)
    const resent = await h.api('POST', `${base(webhook.id)}/deliveries/${webhookId(0)}/resend`)
    expect(resent.status).toBe(202)
    expect((await audits('webhook.delivery.resend')).map((e) => [e.outcome, e.statusCode])).toEqual([['success', 202]])
    const [second] = await h.appendEvents(1)
    await h.runUntil(T0 + 10_000)
    expect(h.receiver.receipts.map((r) => r.at - T0)).toEqual([0, 2_000, 4_000])
    expect(h.receiver.receipts.map((_, i) => ids(i))).toEqual([[first.id], [first.id], [second.id]])
    expect(webhookId(1)).toBe(resent.body.id)
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

  it('reaches a failed delivery that more than 128 later deliveries pushed out of the records', async () => {
    h = await startHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '1s' } })
    const webhook = await h.createWebhook()
    h.receiver.reply = (_r, i) => ({ status: i < 2 ? 500 : 200 })
    const [lost] = await h.appendEvents(1)
    await h.runFor(5_000)
    const failedId = webhookId(0)
    expect((await h.api('POST', `${base(webhook.id)}/release`)).status).toBe(200)
    // 130 deliveries of one event each, every one its own batch.
    for (let i = 0; i < 130; i++) {
      await h.appendEvents(1)
      await h.runFor(300)
    }
    expect(h.receiver.receipts).toHaveLength(132)
    const kept = await h.services.webhookRecords.listDeliveries(NS, webhook.id, 1_000)
    expect(kept.items).toHaveLength(128)
    expect(kept.items.map((record) => record.id)).not.toContain(failedId)

    const recovered = await h.api('POST', `${base(webhook.id)}/recover`, { since: new Date(T0 - 60_000).toISOString() })
    expect(recovered).toMatchObject({ status: 202, body: { count: 1 } })
    await h.runFor(5_000)
    expect(h.receiver.receipts).toHaveLength(133)
    expect(ids(132)).toEqual([lost.id])
    expect(webhookId(132)).not.toBe(failedId)
  })

  it('re-queues several failed deliveries oldest first, each under a new webhook-id', async () => {
    h = await startHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '1s' } })
    const webhook = await h.createWebhook()
    h.receiver.reply = () => ({ status: 500 })
    const [first] = await h.appendEvents(1)
    await h.runFor(5_000)
    expect((await h.api('POST', `${base(webhook.id)}/release`)).status).toBe(200)
    const [second] = await h.appendEvents(1)
    await h.runFor(5_000)
    const failedIds = [webhookId(0), webhookId(2)]
    expect(new Set(failedIds).size).toBe(2)
    h.receiver.reply = () => ({ status: 200 })
    const recovered = await h.api('POST', `${base(webhook.id)}/recover`, { since: new Date(T0 - 60_000).toISOString() })
    expect(recovered).toMatchObject({ status: 202, body: { count: 2 } })
    expect((await audits('webhook.recover')).map((e) => [e.outcome, e.statusCode])).toEqual([['success', 202]])
    expect((await h.api('POST', `${base(webhook.id)}/release`)).status).toBe(200)
    await h.runFor(10_000)
    expect(h.receiver.receipts.slice(4).map((_, i) => ids(i + 4))).toEqual([[first.id], [second.id]])
    expect(failedIds).not.toContain(webhookId(4))
    expect(failedIds).not.toContain(webhookId(5))
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

describe('failed ledger', () => {
  const failed = (id: string) => ({ id, createdAt: new Date(T0).toISOString() }) as never
  it('enters a failed delivery once and drops the oldest past what it keeps', () => {
    const one = enterFailed(null, failed('a'), 2)
    expect(enterFailed(one.ledger, failed('a'), 2)).toEqual({ ledger: one.ledger, dropped: [] })
    const two = enterFailed(one.ledger, failed('b'), 2)
    const three = enterFailed(two.ledger, failed('c'), 2)
    expect(three.ledger.items.map((item) => item.id)).toEqual(['b', 'c'])
    expect(three.dropped).toEqual(['a'])
  })
})
