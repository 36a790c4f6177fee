import { afterEach, describe, expect, it } from 'vitest'
import { keys } from '../../storage/repositories/keys'
import { NS, receiptProblems, startHarness, T0, type Harness } from './support/harness'

let h: Harness
afterEach(async () => h?.close())

const HOUR = 3_600_000
/** Attempt times of the default schedule: 0, 30 s, 2 min 30 s, 12 min 30 s, 42 min 30 s, 1 h 42 min 30 s. */
const LAST_ATTEMPT = 30_000 + 120_000 + 600_000 + 1_800_000 + HOUR

async function quarantinedWebhook() {
  h = await startHarness()
  const webhook = await h.createWebhook()
  let failing = true
  h.receiver.reply = () => ({ status: failing ? 500 : 200 })
  const [first] = await h.appendEvents(1)
  await h.runUntil(T0 + LAST_ATTEMPT)
  return { webhook, first, recover: () => (failing = false) }
}

describe('webhook engine: retry exhaustion and quarantine', () => {
  it('six failures record the batch failed, count its events dropped and quarantine for 24 h', async () => {
    const { webhook } = await quarantinedWebhook()
    expect(h.receiver.receipts.map((r) => r.at - T0)).toEqual([0, 30_000, 150_000, 750_000, 2_550_000, LAST_ATTEMPT])
    expect(receiptProblems(h.receiver)).toEqual([])
    const [record] = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/deliveries`)).body
    expect(record).toMatchObject({
      status: 'failed',
      attempts: 6,
      responseStatus: 500,
      completedAt: new Date(T0 + LAST_ATTEMPT).toISOString(),
    })
    const state = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/state`)).body
    expect(state).toEqual({
      state: 'quarantined',
      bufferedEvents: 0,
      quarantinedUntil: new Date(T0 + LAST_ATTEMPT + 24 * HOUR).toISOString(),
    })
    const metrics = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/metrics?bucket=1d`)).body
    // The 1 h 42 min of retries may cross midnight (UTC): add up the day buckets.
    const total = (field: string) =>
      metrics.buckets.reduce((sum: number, bucket: Record<string, number>) => sum + bucket[field], 0)
    const counts = Object.fromEntries(
      ['deliveriesFailed', 'deliveriesSuccess', 'eventsDropped', 'eventsSent'].map((f) => [f, total(f)]),
    )
    expect(counts).toEqual({ deliveriesFailed: 6, deliveriesSuccess: 0, eventsDropped: 1, eventsSent: 0 })
    const doc = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}`)).body
    expect(doc.quarantinedUntil).toBe(state.quarantinedUntil)
    // Entering quarantine changes the webhook's configuration, so it is announced like any change.
    const updates = (await h.backend.logs.range<any>(keys.eventLog(NS), { limit: 1000 }))
      .map((e) => e.value)
      .filter((e) => e.type === 'config.webhook.updated')
    expect(updates.at(-1).data).toMatchObject({
      webhook: webhook.id,
      actor: {},
      config: { quarantinedUntil: state.quarantinedUntil },
    })
  })

  it('keeps buffering while quarantined and delivers the backlog at once on release', async () => {
    const { webhook, recover } = await quarantinedWebhook()
    const buffered = await h.appendEvents(3)
    await h.runFor(HOUR)
    expect(h.receiver.receipts).toHaveLength(6)
    expect((await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/state`)).body).toMatchObject({
      state: 'quarantined',
      bufferedEvents: 3,
    })

    recover()
    const released = await h.api('POST', `/v1/${NS}/webhooks/${webhook.id}/release`)
    expect(released.status).toBe(200)
    expect(released.body.releasedAt).toBe(new Date(h.clock.now()).toISOString())
    await h.runFor(0)
    const last = h.receiver.receipts.at(-1)!
    expect(last.at).toBe(h.clock.now())
    expect(last.json.events.map((e) => e.id)).toEqual(buffered.map((e) => e.id))
    expect((await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/state`)).body).toEqual({
      state: 'active',
      bufferedEvents: 0,
    })
    expect((await h.api('POST', `/v1/${NS}/webhooks/${webhook.id}/release`)).status).toBe(409)

    const updates = (await h.backend.logs.range<any>(keys.eventLog(NS), { limit: 1000 }))
      .map((e) => e.value)
      .filter((e) => e.type === 'config.webhook.updated')
    expect(updates.at(-1).data.config).toMatchObject({ id: webhook.id, releasedAt: released.body.releasedAt })
    expect(JSON.stringify(updates)).not.toContain('whsec_')
  })

  it('resumes by itself when the quarantine time has passed', async () => {
    const { webhook, recover } = await quarantinedWebhook()
    const buffered = await h.appendEvents(2)
    recover()
    const until = T0 + LAST_ATTEMPT + 24 * HOUR
    await h.runUntil(until - 1)
    expect(h.receiver.receipts).toHaveLength(6)
    await h.runUntil(until)
    expect(h.receiver.receipts).toHaveLength(7)
    expect(h.receiver.receipts[6].at).toBe(until)
    expect(h.receiver.receipts[6].json.events.map((e) => e.id)).toEqual(buffered.map((e) => e.id))
    const doc = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}`)).body
    expect(doc.quarantinedUntil).toBeUndefined()
    const updates = (await h.backend.logs.range<any>(keys.eventLog(NS), { limit: 1000 }))
      .map((e) => e.value)
      .filter((e) => e.type === 'config.webhook.updated')
    expect(updates.at(-1).data.config.quarantinedUntil).toBeUndefined()
    expect(updates.at(-2).data.config.quarantinedUntil).toBe(new Date(until).toISOString())
  })
})
