import { afterEach, describe, expect, it } from 'vitest'
import { startWebhookEngine, type WebhookEngine } from '../../server/webhooks/delivery/engine'
import { createWebhookRuntime } from '../../server/webhooks/delivery/runtime'
import { parseWebhookSettings } from '../../server/webhooks/configuration/settings'
import { waitFor } from '../support/wait-for'
import { receiptProblems, startHarness, type Harness } from './support/harness'

let h: Harness
let joined: WebhookEngine | null = null
afterEach(async () => {
  await joined?.stop()
  joined = null
  await h?.close()
})

const HOOKS = 6

describe.each(['redis', 'cluster'] as const)('delivery hosts share the webhooks evenly (%s)', (backend) => {
  it('a process that joins gets half of the webhooks the first one held, and each event reaches each webhook once, in order', async () => {
    h = await startHarness({ backend, clock: 'system' })
    const secrets: string[] = []
    for (let i = 0; i < HOOKS; i++)
      secrets.push((await h.createWebhook({ name: `r${i}`, headers: { 'x-test-hook': `r${i}` } })).secret)
    h.receiver.secrets = secrets
    await h.engine.host.tick()
    expect(h.engine.host.owned()).toHaveLength(HOOKS)
    const before = await h.appendEvents(3)

    const runtime = createWebhookRuntime(h.services, parseWebhookSettings({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' }))
    joined = await startWebhookEngine(h.services, runtime, { clock: h.clock, leaseTtlMs: 5_000 })
    // The first process hands over actors at rest in its next pass; the second adopts them on its signal.
    await waitFor(
      async () => {
        await h.engine.host.tick()
        return joined!.host.owned().length === HOOKS / 2
      },
      10_000,
      'the joining process holds half of the webhooks',
    )
    expect(h.engine.host.owned()).toHaveLength(HOOKS / 2)
    expect(new Set([...h.engine.host.owned(), ...joined.host.owned()]).size).toBe(HOOKS)

    const after = await h.appendEvents(3)
    const expected = [...before, ...after].map((event) => event.id)
    const byHook = () => {
      const ids = new Map<string, string[]>()
      for (const receipt of h.receiver.receipts) {
        const hook = String(receipt.headers['x-test-hook'])
        ids.set(hook, [...(ids.get(hook) ?? []), ...receipt.json.events.map((event) => event.id)])
      }
      return ids
    }
    await waitFor(
      () => [...byHook().values()].reduce((sum, ids) => sum + ids.length, 0) >= HOOKS * expected.length,
      10_000,
      'every event at every webhook',
    )
    await Promise.all([h.idle(), joined.idle()])
    for (let i = 0; i < HOOKS; i++) expect(byHook().get(`r${i}`)).toEqual(expected)
    expect(receiptProblems(h.receiver)).toEqual([])
  })

  it('a process that stops leaves the count at once: the other adopts every webhook in its next pass', async () => {
    h = await startHarness({ backend, clock: 'system' })
    const runtime = createWebhookRuntime(h.services, parseWebhookSettings({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' }))
    joined = await startWebhookEngine(h.services, runtime, { clock: h.clock, leaseTtlMs: 5_000 })
    for (let i = 0; i < HOOKS; i++) await h.createWebhook({ name: `r${i}` })
    await h.engine.host.tick()
    await joined.host.tick()
    expect(h.engine.host.owned().length + joined.host.owned().length).toBe(HOOKS)
    expect(h.engine.host.owned().length).toBeLessThanOrEqual(HOOKS / 2)
    await joined.stop()
    joined = null
    await h.engine.host.tick()
    expect(h.engine.host.owned()).toHaveLength(HOOKS)
  })
})
