import { afterEach, describe, expect, it } from 'vitest'
import { keys } from '../../storage/repositories/keys'
import { NS, receiptProblems, startHarness, type Harness } from './support/harness'
import { waitFor } from './support/built-server'

let h: Harness
afterEach(async () => h?.close())

describe('webhook engine: overflow while batches are taken (Redis, real time)', () => {
  it('reports every drop exactly, never as droppedEvents: 0, and loses, repeats or reorders nothing else', async () => {
    h = await startHarness({ backend: 'redis', clock: 'system', env: { WEBHOOK_BUFFER: '20', WEBHOOK_RATE: '50' } })
    await h.createWebhook()
    // A slow receiver keeps a batch in flight while producers overflow the buffer behind it.
    h.receiver.reply = () => ({ status: 200, delayMs: 5 })
    const appended: string[] = []
    for (let round = 0; round < 30; round++) {
      const burst = await Promise.all(Array.from({ length: 3 }, () => h.appendEvents(4)))
      appended.push(...burst.flat().map((event) => event.id))
    }

    const accounted = () => {
      const received = h.receiver.events()
      const delivered = received.filter((e) => e.type === 'audit.test.ping').length
      const dropped = received
        .filter((e) => e.type === 'webhook.rate_limited')
        .reduce((sum, e) => sum + e.data.droppedEvents, 0)
      return delivered + dropped
    }
    await waitFor(() => accounted() >= appended.length, 30_000, 'every event delivered or reported dropped')
    await h.idle()

    const received = h.receiver.events()
    const notices = received.filter((e) => e.type === 'webhook.rate_limited')
    expect(notices.length).toBeGreaterThan(0)
    expect(notices.every((e) => e.data.reason === 'buffer_overflow' && e.data.droppedEvents > 0)).toBe(true)
    const delivered = received.filter((e) => e.type === 'audit.test.ping').map((e) => e.id)
    // Delivered events keep log order, none twice, and the drops add up to exactly the rest.
    const logged = (await h.backend.logs.range<{ id: string }>(keys.eventLog(NS), { limit: 10_000 })).map(
      (entry) => entry.value.id,
    )
    const kept = new Set(delivered)
    expect(delivered).toEqual(logged.filter((id) => kept.has(id)))
    expect(new Set(delivered).size).toBe(delivered.length)
    expect(notices.reduce((sum, e) => sum + e.data.droppedEvents, 0)).toBe(appended.length - delivered.length)
    expect(receiptProblems(h.receiver)).toEqual([])
  })
})
