import { describe, expect, it } from 'vitest'
import type { NamespaceEvent } from '../../server/events/schemas'
import { envelope, takeBatch } from '../../server/webhooks/protocol/batching'
import {
  applicableRetryAfter,
  maxAttempts,
  nextDelay,
  parseRetryAfter,
  retryDelay,
} from '../../machines/webhook-delivery/retry'

const event = (n: number, pad = 0): NamespaceEvent => ({
  id: `evt-${n}`,
  type: 'audit.test.ping',
  time: '2024-01-01T00:00:00.000Z',
  namespace: 'ns',
  data: { action: 'test.ping', outcome: 'success', statusCode: 200, pad: 'x'.repeat(pad) },
})
const testSend = (n: number): NamespaceEvent => ({
  ...event(n),
  type: 'webhook.test',
  data: { webhook: 'wh-1', message: 'Test event' },
})

describe('takeBatch', () => {
  it('takes at most 100 events, oldest first', async () => {
    const batch = await takeBatch(Array.from({ length: 250 }, (_, i) => event(i)))
    expect(batch).toHaveLength(100)
    expect(batch[0].id).toBe('evt-0')
    expect(batch[99].id).toBe('evt-99')
  })

  it('stops before the envelope would pass the byte cap', async () => {
    const events = Array.from({ length: 10 }, (_, i) => event(i, 100_000))
    const batch = await takeBatch(events)
    expect(batch.length).toBe(5)
    expect(Buffer.byteLength((await envelope(batch)).body)).toBeLessThanOrEqual(512 * 1024)
    const unbounded = await takeBatch(events, { maxEvents: 100, maxBytes: 10 ** 9 })
    expect(Buffer.byteLength((await envelope(unbounded.slice(0, 6))).body)).toBeGreaterThan(512 * 1024)
  })

  it('fills to exactly the cap when it fits', async () => {
    const events = [event(1), event(2)]
    const exact = Buffer.byteLength((await envelope(events)).body)
    expect(await takeBatch(events, { maxEvents: 100, maxBytes: exact })).toHaveLength(2)
    expect(await takeBatch(events, { maxEvents: 100, maxBytes: exact - 1 })).toHaveLength(1)
  })

  it('takes one oversized event alone rather than blocking', async () => {
    const batch = await takeBatch([event(1, 600_000), event(2)])
    expect(batch.map((e) => e.id)).toEqual(['evt-1'])
  })

  it('delivers a test send alone: the batch ends before it, or is just it', async () => {
    const buffer = [event(1), event(2), testSend(3), event(4), testSend(5), testSend(6)]
    expect((await takeBatch(buffer)).map((e) => e.id)).toEqual(['evt-1', 'evt-2'])
    expect((await takeBatch(buffer.slice(2))).map((e) => e.id)).toEqual(['evt-3'])
    expect((await takeBatch(buffer.slice(3))).map((e) => e.id)).toEqual(['evt-4'])
    expect((await takeBatch(buffer.slice(4))).map((e) => e.id)).toEqual(['evt-5'])
    expect((await takeBatch(buffer.slice(5))).map((e) => e.id)).toEqual(['evt-6'])
  })

  it('returns nothing from an empty buffer', async () => {
    expect(await takeBatch([])).toEqual([])
  })
})

describe('envelope', () => {
  it('wraps events in version 1 and serialises once', async () => {
    const result = await envelope([event(1)])
    expect(result.envelope).toEqual({ version: 1, events: [event(1)] })
    expect(result.body).toBe(JSON.stringify({ version: 1, events: [event(1)] }))
    expect(JSON.parse(result.body)).toEqual(result.envelope)
  })
})

describe('parseRetryAfter', () => {
  const now = Date.parse('2024-01-01T00:00:00Z')

  it('reads delay seconds', () => {
    expect(parseRetryAfter('7', now)).toBe(7000)
    expect(parseRetryAfter(' 0 ', now)).toBe(0)
  })

  it('reads an HTTP date relative to now', () => {
    expect(parseRetryAfter('Mon, 01 Jan 2024 00:02:00 GMT', now)).toBe(120_000)
    expect(parseRetryAfter('Sun, 31 Dec 2023 23:00:00 GMT', now)).toBe(0)
  })

  it('caps at one hour', () => {
    expect(parseRetryAfter('86400', now)).toBe(3_600_000)
    expect(parseRetryAfter('Tue, 02 Jan 2024 00:00:00 GMT', now)).toBe(3_600_000)
  })

  it.each([undefined, null, '', 'soon', '-5', '1.5', '2024-01-01T00:02:00Z'])('gives null for %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeNull()
  })

  it('honours Retry-After only on 429 and 503', () => {
    expect(applicableRetryAfter(429, 7000)).toBe(7000)
    expect(applicableRetryAfter(503, 7000)).toBe(7000)
    expect(applicableRetryAfter(500, 7000)).toBeUndefined()
    expect(applicableRetryAfter(429, null)).toBeUndefined()
  })
})

describe('nextDelay', () => {
  const schedule = [30_000, 120_000, 600_000, 1_800_000, 3_600_000]

  it('follows the schedule: six attempts in all', () => {
    expect(maxAttempts(schedule)).toBe(6)
    expect([1, 2, 3, 4, 5].map((n) => nextDelay(n, schedule))).toEqual(schedule)
    expect(nextDelay(6, schedule)).toBeNull()
  })

  it('lets Retry-After replace the scheduled delay, capped at one hour', () => {
    expect(nextDelay(1, schedule, 7_000)).toBe(7_000)
    expect(nextDelay(1, schedule, 10 * 3_600_000)).toBe(3_600_000)
    expect(nextDelay(6, schedule, 7_000)).toBeNull()
  })

  it('has no retries with an empty schedule', () => {
    expect(nextDelay(1, [])).toBeNull()
  })
})

describe('retryDelay (the machine and the attempt record both use it)', () => {
  const schedule = [1_000, 5_000]

  it('follows the schedule, and a Retry-After only on 429 and 503', () => {
    expect(retryDelay(1, { responseStatus: 500 }, schedule)).toBe(1_000)
    expect(retryDelay(2, { responseStatus: 500, retryAfterMs: 7_000 }, schedule)).toBe(5_000)
    expect(retryDelay(1, { responseStatus: 429, retryAfterMs: 7_000 }, schedule)).toBe(7_000)
    expect(retryDelay(1, { responseStatus: 503, retryAfterMs: 10 * 3_600_000 }, schedule)).toBe(3_600_000)
  })

  it('is null once the attempts are used up', () => {
    expect(retryDelay(3, { responseStatus: 503, retryAfterMs: 7_000 }, schedule)).toBeNull()
  })
})
