import { afterEach, describe, expect, it } from 'vitest'
import { NS, receiptProblems, startHarness, T0, type Harness } from './support/harness'

let h: Harness
afterEach(async () => h?.close())

describe('webhook engine: buffer cap and pacing', () => {
  it('5001 events drop the oldest and report one buffer_overflow notice', async () => {
    h = await startHarness({ engine: false })
    const webhook = await h.createWebhook()
    // Everything is in the log before routing starts, so the buffer fills in one go.
    const events = await h.appendEvents(5001)
    // The first batch fails and waits an hour, so the whole backlog is buffered at once.
    let open = false
    h.receiver.reply = () => (open ? { status: 200 } : { status: 503, headers: { 'retry-after': '3600' } })
    await h.startEngine()
    await h.idle()
    open = true
    await h.runFor(3_600_000 + 60_000)

    const [failed, ...delivered_] = h.receiver.receipts
    // The retry of the first batch keeps its webhook-id and every one of its events: a batch in
    // flight is out of the buffer, so overflow never drops from it.
    expect(delivered_[0].headers['webhook-id']).toBe(failed.headers['webhook-id'])
    const retried = delivered_[0].json.events.map((e) => e.id)
    const first = failed.json.events.map((e) => e.id)
    expect(retried).toEqual(first)
    const received = delivered_.flatMap((r) => r.json.events)
    const notices = received.filter((e) => e.type === 'webhook.rate_limited' && e.data.reason === 'buffer_overflow')
    expect(notices).toHaveLength(1)
    // One event over the cap, and the notice itself takes one more slot.
    expect(notices[0].data).toEqual({
      webhook: webhook.id,
      reason: 'buffer_overflow',
      droppedEvents: 2,
      bufferedEvents: 5000,
    })
    // The two oldest events still waiting when the buffer overflowed are the ones dropped.
    const delivered = received.filter((e) => e.type === 'audit.test.ping').map((e) => e.id)
    const waiting = events.map((e) => e.id).filter((id) => !first.includes(id))
    const dropped = waiting.slice(0, 2)
    expect(delivered).toEqual(events.map((e) => e.id).filter((id) => !dropped.includes(id)))
    // The 5000-event backlog is also paced, which is reported once as `rate_limited`.
    expect(
      received
        .filter((e) => e.type === 'webhook.rate_limited')
        .map((e) => e.data.reason)
        .sort(),
    ).toEqual(['buffer_overflow', 'rate_limited'])
    expect(receiptProblems(h.receiver)).toEqual([])
    const metrics = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/metrics?bucket=1h`)).body
    const total = (field: string) =>
      metrics.buckets.reduce((sum: number, bucket: Record<string, number>) => sum + bucket[field], 0)
    expect([total('eventsDropped'), total('eventsSent'), total('deliveriesFailed')]).toEqual([2, 4999 + 2, 1])
    expect(metrics.buckets).toHaveLength(24)
  })

  it('never starts more than 5 deliveries in any second, and reports pacing against a backlog', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    const events = await h.appendEvents(2_500)
    await h.runFor(10_000)

    const times = h.receiver.receipts.map((r) => r.at)
    expect(times.length).toBe(26)
    for (const start of times)
      expect(times.filter((t) => t >= start && t < start + 1_000).length).toBeLessThanOrEqual(5)
    // The first five go out at once, then one slot frees up per 200 ms on average.
    expect(times.slice(0, 5)).toEqual(Array(5).fill(T0))
    expect(times[5]).toBe(T0 + 1_000)

    const received = h.receiver.events()
    expect(received.filter((e) => e.type === 'audit.test.ping').map((e) => e.id)).toEqual(events.map((e) => e.id))
    const notice = received.find((e) => e.type === 'webhook.rate_limited')
    expect(notice?.data).toMatchObject({ webhook: webhook.id, reason: 'rate_limited', droppedEvents: 0 })
    expect(notice!.data.bufferedEvents).toBeGreaterThan(1_000)
    expect(receiptProblems(h.receiver)).toEqual([])
  })

  it('system events about one webhook go to that webhook only', async () => {
    h = await startHarness()
    const first = await h.createWebhook()
    const second = await h.createWebhook()
    expect((await h.api('POST', `/v1/${NS}/webhooks/${first.id}/test`)).status).toBe(202)
    await h.runFor(1_000)
    expect(h.receiver.events().map((e) => e.data.webhook)).toEqual([first.id])
    expect(second.id).not.toBe(first.id)
  })
})
