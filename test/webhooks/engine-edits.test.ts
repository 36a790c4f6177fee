import { afterEach, describe, expect, it } from 'vitest'
import { NS, receiptProblems, startHarness, type Harness } from './support/harness'
import type { WebhookRecord } from '../../server/webhooks/configuration/model'

let h: Harness
afterEach(async () => h?.close())

/** Edits the stored document the way another process would: no signal reaches this engine. */
async function editQuietly(id: string, edit: (doc: WebhookRecord) => WebhookRecord): Promise<void> {
  await h.services.webhooks.mutate(NS, id, (current) => ({ next: edit(current!), result: undefined }))
}

// The take that stores a batch reads the webhook document in the same write, assuming the one
// the previous take saw: an edit in between must fail that assumption, never slip past it.
describe.each(['memory', 'redis'] as const)('webhook engine (%s): edits reach the next batch', (backend) => {
  it('a header edited between two batches goes out with the second, without any signal', async () => {
    h = await startHarness({ backend })
    const webhook = await h.createWebhook({ headers: { 'x-edition': 'one' } })
    await h.appendEvents(1)
    await h.runFor(1_000)
    await editQuietly(webhook.id, (doc) => ({ ...doc, headers: { 'x-edition': 'two' } }))
    await h.appendEvents(1)
    await h.runFor(1_000)
    expect(h.receiver.receipts.map((receipt) => receipt.headers['x-edition'])).toEqual(['one', 'two'])
    expect(receiptProblems(h.receiver)).toEqual([])
  })

  it('a webhook disabled between two batches sends nothing more, and its batch waits in the cursor', async () => {
    h = await startHarness({ backend })
    const webhook = await h.createWebhook()
    await h.appendEvents(1)
    await h.runFor(1_000)
    await editQuietly(webhook.id, (doc) => ({ ...doc, enabled: false }))
    const [held] = await h.appendEvents(1)
    await h.runFor(1_000)
    expect(h.receiver.receipts).toHaveLength(1)
    const cursor = await h.services.webhooks.cursors.get(NS, webhook.id)
    expect(cursor?.batch?.eventIds).toEqual([held.id])

    const enable = { name: 'receiver', url: h.receiver.url, eventTypes: ['audit.test.*'], enabled: true }
    expect((await h.api('PUT', `/v1/${NS}/webhooks/${webhook.id}`, enable)).status).toBe(200)
    await h.runFor(1_000)
    expect(h.receiver.receipts.map((receipt) => receipt.json.events[0].id)).toEqual([expect.any(String), held.id])
  })
})
