import { afterEach, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait-for'
import { NS, receiptProblems, startHarness, type Harness } from './support/harness'

let h: Harness
afterEach(async () => h?.close())

describe('webhook engine on real timers and Redis', () => {
  it('retries on a short schedule and delivers everything in order, signed and schema-valid', async () => {
    h = await startHarness({ backend: 'redis', clock: 'system', env: { WEBHOOK_RETRY_SCHEDULE: '200ms,300ms' } })
    const webhook = await h.createWebhook()
    h.receiver.reply = (_r, i) => ({ status: i < 2 ? 503 : 200 })
    const events = await h.appendEvents(250)
    await waitFor(() => h.receiver.receipts.length >= 5, 5_000)

    const receipts = h.receiver.receipts
    expect(receipts.map((r) => r.json.events.length)).toEqual([100, 100, 100, 100, 50])
    expect(receipts[1].at - receipts[0].at).toBeGreaterThanOrEqual(190)
    expect(receipts[2].at - receipts[1].at).toBeGreaterThanOrEqual(290)
    expect(receipts[2].headers['webhook-id']).toBe(receipts[0].headers['webhook-id'])
    // Receipts 2..4 delivered distinct events in order; 0 and 1 were failed attempts of receipt 2's batch.
    expect(receipts.slice(2).flatMap((r) => r.json.events.map((e) => e.id))).toEqual(events.map((e) => e.id))
    expect(receiptProblems(h.receiver)).toEqual([])
    await waitFor(
      async () => (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/state`)).body.state === 'active',
      2_000,
    )
    const records = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/deliveries`)).body
    expect(records.map((r: { status: string; attempts: number }) => [r.status, r.attempts])).toEqual([
      ['success', 1],
      ['success', 1],
      ['success', 3],
    ])
  })
})
