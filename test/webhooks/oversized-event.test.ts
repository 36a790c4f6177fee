import { afterEach, describe, expect, it } from 'vitest'
import { makeEvent } from '../../server/events/factory'
import { NS, receiptProblems, startHarness, type Harness } from './support/harness'
import { bigFirewallConfig } from './support/big-config'

/**
 * 512 KB per delivery (spec 6.2 and 8), end to end over loopback: an 805 KB firewall change goes
 * out cut (`payloadTruncated: true`) in a body within the limit that validates against the served
 * schema, between the events around it, and `GET /v1/{ns}/events/{id}` returns it whole.
 */

let h: Harness
afterEach(async () => h?.close())

describe.each(['memory', 'redis'] as const)('an event past 512 KB (%s)', (backend) => {
  it('is delivered cut within 512 KB, schema-valid and in order; the API returns it whole by id', async () => {
    h = await startHarness({ backend })
    await h.createWebhook({ eventTypes: ['audit.test.*', 'config.*'] })
    const [before] = await h.appendEvents(1)
    const big = makeEvent(h.clock, NS, 'config.firewall.updated', {
      firewall: 'main',
      version: 2,
      ecosystem: 'npm',
      actor: { userId: 'owner', requestId: 'req-big' },
      config: bigFirewallConfig(805),
    })
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(805 * 1024)
    await h.backend.keyValue.transact([], () => ({ writes: { events: [big] }, result: undefined }))
    const [after] = await h.appendEvents(1)
    await h.runFor(10_000)

    // The webhook's own config.webhook.created aside.
    const received = h.receiver.events().filter((event) => event.type !== 'config.webhook.created')
    expect(received.map((event) => event.id)).toEqual([before.id, big.id, after.id])
    for (const receipt of h.receiver.receipts) expect(Buffer.byteLength(receipt.body)).toBeLessThanOrEqual(512 * 1024)
    expect(receiptProblems(h.receiver)).toEqual([])
    const sent = received[1] as (typeof received)[number] & { payloadTruncated?: boolean }
    expect(sent.payloadTruncated).toBe(true)
    expect(sent.data).toMatchObject({ firewall: 'main', version: 2, ecosystem: 'npm' })
    expect(received[0]).not.toHaveProperty('payloadTruncated')

    const whole = await h.api('GET', `/v1/${NS}/events/${big.id}`)
    expect(whole.status).toBe(200)
    expect(whole.body).toEqual(big)
    const missing = await h.api('GET', `/v1/${NS}/events/evt-0000000000000000000000000`)
    expect([missing.status, missing.body.code]).toEqual([404, 'event_not_found'])
    expect((await h.api('GET', `/v1/${NS}/events/not-an-event`)).status).toBe(400)
  })
})
