import { afterEach, describe, expect, it } from 'vitest'
import { keys } from '../../storage/repositories/keys'
import type { NamespaceEvent } from '../../server/events/schemas'
import { NS, receiptProblems, startHarness, type Harness } from './support/harness'

/**
 * One overflow notice per gap (issue 24): a flood into a full buffer while the receiver is held
 * gives ONE `buffer_overflow` notice, whatever the number of drops, whose counts add up and stay
 * within the cap; what is delivered keeps log order, none twice.
 */

let h: Harness
afterEach(async () => h?.close())

const CAP = 200

describe.each(['memory', 'redis'] as const)('one overflow notice per gap (%s)', (backend) => {
  it.each([false, true])(
    'a flood past a held receiver: exactly one notice, counts add up, bufferedEvents <= cap (restart mid-flood: %s)',
    async (restart) => {
      h = await startHarness({ backend, env: { WEBHOOK_BUFFER: String(CAP) } })
      const webhook = await h.createWebhook()
      // The receiver is held: the first batch fails and waits an hour (on the injected clock).
      let open = false
      h.receiver.reply = () => (open ? { status: 200 } : { status: 503, headers: { 'retry-after': '3600' } })
      const produced: NamespaceEvent[] = await h.appendEvents(1)
      await h.idle()
      expect(h.receiver.receipts).toHaveLength(1)
      // 400 events in 40 separate appends: the buffer overflows again and again.
      for (let round = 0; round < 40; round++) {
        produced.push(...(await h.appendEvents(10)))
        await h.idle()
        if (restart && round === 20) {
          await h.engine.stop()
          await h.startEngine()
          await h.idle()
        }
      }
      const state = (await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/state`)).body
      expect(state.bufferedEvents).toBeLessThanOrEqual(CAP)

      open = true
      await h.runFor(3_600_000 + 60_000)
      const [, ...deliveries] = h.receiver.receipts
      const received = deliveries.flatMap((receipt) => receipt.json.events)
      const notices = received.filter((event) => event.type === 'webhook.rate_limited')
      expect(notices.map((event) => event.data.reason)).toEqual(['buffer_overflow'])
      const [notice] = notices
      expect(notice.data.bufferedEvents).toBeLessThanOrEqual(CAP)
      expect(notice.data.droppedEvents).toBeGreaterThan(0)

      // Delivered + dropped = produced; delivered in log order, none twice.
      const delivered = received.filter((event) => event.type === 'audit.test.ping').map((event) => event.id)
      expect(new Set(delivered).size).toBe(delivered.length)
      expect(delivered.length + notice.data.droppedEvents).toBe(produced.length)
      const logged = (await h.backend.logs.range<{ id: string }>(keys.eventLog(NS), { limit: 10_000 })).map(
        (entry) => entry.value.id,
      )
      const kept = new Set(delivered)
      expect(delivered).toEqual(logged.filter((id) => kept.has(id)))
      // The dropped ones are the oldest that were waiting: everything after the gap arrives.
      const firstBatch = new Set(h.receiver.receipts[0].json.events.map((event) => event.id))
      const waiting = produced.map((event) => event.id).filter((id) => !firstBatch.has(id))
      expect(delivered.filter((id) => !firstBatch.has(id))).toEqual(waiting.slice(notice.data.droppedEvents))
      expect(receiptProblems(h.receiver)).toEqual([])
      expect((await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/state`)).body.bufferedEvents).toBe(0)
    },
  )
})

describe('overflow announced at most once a second while no take writes the cursor (memory)', () => {
  it('a flood into a held webhook appends one notice per second of drops, not one per read of the log', async () => {
    h = await startHarness({ backend: 'memory', env: { WEBHOOK_BUFFER: String(CAP) } })
    const webhook = await h.createWebhook()
    let open = false
    h.receiver.reply = () => (open ? { status: 200 } : { status: 503, headers: { 'retry-after': '3600' } })
    const produced: NamespaceEvent[] = await h.appendEvents(1)
    await h.idle()
    const noticesInLog = async () =>
      (await h.backend.logs.range<NamespaceEvent>(keys.eventLog(NS), { limit: 10_000 })).filter(
        (entry) => entry.value.type === 'webhook.rate_limited',
      ).length
    /** Appends of 10 events, each read by the feed (and overflowing) before the next. */
    const flood = async (rounds: number) => {
      for (let round = 0; round < rounds; round++) {
        produced.push(...(await h.appendEvents(10)))
        await h.idle()
      }
    }

    // The clock stands still: 30 reads of the log that each overflow, within a second of the take.
    await flood(30)
    expect(await noticesInLog()).toBe(0)
    await h.runFor(1_000)
    expect(await noticesInLog()).toBe(1)
    // Drops within the next second wait for it; then one more write announces them all.
    await flood(10)
    expect(await noticesInLog()).toBe(1)
    await h.runFor(1_000)
    expect(await noticesInLog()).toBe(2)

    open = true
    await h.runFor(3_600_000 + 60_000)
    const received = h.receiver.receipts.slice(1).flatMap((receipt) => receipt.json.events)
    // The second notice took the first one's count over: one notice delivered, the whole gap in it.
    const notices = received.filter((event) => event.type === 'webhook.rate_limited')
    expect(notices).toHaveLength(1)
    const delivered = received.filter((event) => event.type === 'audit.test.ping')
    expect(delivered.length + notices[0].data.droppedEvents).toBe(produced.length)
    expect(receiptProblems(h.receiver)).toEqual([])
    expect((await h.api('GET', `/v1/${NS}/webhooks/${webhook.id}/state`)).body.bufferedEvents).toBe(0)
  })
})
