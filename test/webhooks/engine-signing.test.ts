import { afterEach, describe, expect, it } from 'vitest'
import { NS, receiptProblems, startHarness, T0, type Harness } from './support/harness'

let h: Harness
afterEach(async () => h?.close())

const HOUR = 3_600_000

describe('webhook engine: signatures and test sends', () => {
  it('after a rotation every delivery carries two signatures that both verify, until the overlap ends', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    const rotated = await h.api('POST', `/v1/${NS}/webhooks/${webhook.id}/secret/rotate`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(webhook.secret)
    expect(rotated.body.previousSecretValidUntil).toBe(new Date(T0 + 24 * HOUR).toISOString())
    h.receiver.secrets = [webhook.secret, rotated.body.secret]

    await h.appendEvents(1)
    await h.runFor(1_000)
    const [during] = h.receiver.receipts
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect(during.verifiedWith).toEqual([0, 1])

    await h.runUntil(T0 + 24 * HOUR)
    await h.appendEvents(1)
    await h.runFor(1_000)
    const after = h.receiver.receipts[1]
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(after.verifiedWith).toEqual([1])
    expect(receiptProblems(h.receiver)).toEqual([])
  })

  it('a test send is answered 202 and delivered as webhook.test with a record marked test: true', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    const sent = await h.api('POST', `/v1/${NS}/webhooks/${webhook.id}/test`)
    expect(sent.status).toBe(202)
    await h.runFor(1_000)
    const [receipt] = h.receiver.receipts
    expect(receipt.json.events).toEqual([
      expect.objectContaining({
        id: sent.body.event,
        type: 'webhook.test',
        data: { webhook: webhook.id, message: 'Test event' },
      }),
    ])
    const [record] = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/deliveries`)).body
    expect(record).toMatchObject({
      id: receipt.headers['webhook-id'],
      test: true,
      status: 'success',
      eventTypes: ['webhook.test'],
      payload: receipt.body,
    })
    expect(receiptProblems(h.receiver)).toEqual([])
  })

  it('a disabled webhook receives nothing and refuses test sends', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook({ enabled: false })
    expect((await h.api('POST', `/v1/${NS}/webhooks/${webhook.id}/test`)).status).toBe(409)
    await h.appendEvents(3)
    await h.runFor(1_000)
    expect(h.receiver.receipts).toHaveLength(0)
  })
})
