import { afterEach, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { LocalBackend } from '../../storage'
import { WebhookRecordRepository } from '../../storage/repositories/webhook-records'
import { recordAfterAttempt } from '../../server/webhooks/delivery/record'
import { attemptRecord } from '../../server/webhooks/delivery/attempt-record'
import { createUser } from '../../server/namespace/directory'
import { NS, startHarness, T0, type Harness } from './support/harness'

let h: Harness
afterEach(async () => h?.close())

const path = (webhook: string, delivery = '') =>
  `/v1/${NS}/webhooks/${webhook}/deliveries${delivery ? `/${delivery}` : ''}`
const iso = (ms: number) => new Date(ms).toISOString()

describe('attempt history of a delivery', () => {
  it('lists every attempt oldest first with status, body, error and the scheduled retry', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    h.receiver.reply = (_r, i) =>
      i === 0
        ? { status: 500, body: 'down' }
        : i === 1
          ? { status: 429, headers: { 'retry-after': '7' }, body: 'slow' }
          : { status: 200, body: 'ok' }
    await h.appendEvents(1)
    await h.runUntil(T0 + 60_000)

    const [record] = (await h.api('GET', path(webhook.id))).body
    const answer = await h.api('GET', `${path(webhook.id, record.id)}/attempts`)
    expect(answer.status).toBe(200)
    const attempts = answer.body
    expect(attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3])
    expect(attempts.map((a: { startedAt: string }) => a.startedAt)).toEqual([
      iso(T0),
      iso(T0 + 30_000),
      iso(T0 + 37_000),
    ])
    expect(attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 429, 200])
    expect(attempts.map((a: { responseBody: string }) => a.responseBody)).toEqual(['down', 'slow', 'ok'])
    // The retry time the machine scheduled: the schedule's 30 s, then the receiver's Retry-After.
    expect(attempts.map((a: { nextAttemptAt?: string }) => a.nextAttemptAt)).toEqual([
      iso(T0 + 30_000),
      iso(T0 + 37_000),
      undefined,
    ])
    // An answer is not a transport error.
    expect(attempts.map((a: { error?: string }) => a.error)).toEqual([undefined, undefined, undefined])
    for (const attempt of attempts) expect(attempt.durationMillis).toBeGreaterThanOrEqual(0)
    // The record keeps exactly its spec fields.
    expect(Object.keys(record).sort()).toEqual(
      [
        'attempts',
        'completedAt',
        'createdAt',
        'durationMillis',
        'eventCount',
        'eventTypes',
        'id',
        'payload',
        'payloadTruncated',
        'responseBody',
        'responseStatus',
        'status',
        'test',
        'webhook',
      ].sort(),
    )
    expect(record).toMatchObject({ attempts: 3, responseStatus: 200, status: 'success' })
  })

  it('records a transport failure with responseStatus 0 and no retry after the last attempt', async () => {
    h = await startHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '1s', WEBHOOK_ATTEMPT_TIMEOUT: '200ms' } })
    const webhook = await h.createWebhook()
    h.receiver.reply = () => ({ hang: true })
    await h.appendEvents(1)
    await h.runFor(5_000)
    const [record] = (await h.api('GET', path(webhook.id))).body
    expect(record.status).toBe('failed')
    const attempts = (await h.api('GET', `${path(webhook.id, record.id)}/attempts`)).body
    expect(attempts).toHaveLength(2)
    expect(attempts[0]).toMatchObject({ attempt: 1, responseStatus: 0, responseBody: '', error: 'timeout' })
    expect(attempts[0].nextAttemptAt).toBeDefined()
    expect(attempts[1]).toMatchObject({ attempt: 2, responseStatus: 0, error: 'timeout' })
    expect(attempts[1].nextAttemptAt).toBeUndefined()
  })

  it('answers 404 for an unknown delivery, 400 for a malformed id, and lets a reader list', async () => {
    h = await startHarness()
    const webhook = await h.createWebhook()
    await h.appendEvents(1)
    await h.runFor(1_000)
    const [record] = (await h.api('GET', path(webhook.id))).body
    const missing = await h.api('GET', `${path(webhook.id)}/whdel-nothere/attempts`)
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).toContain('application/problem+json')
    expect((await h.api('GET', `${path(webhook.id)}/constructor/attempts`)).status).toBe(400)
    expect((await h.api('GET', `${path('nope', record.id)}/attempts`)).status).toBe(404)

    const outsider = await createUser(h.services, NS, 'outsider')
    expect((await h.api('GET', `${path(webhook.id, record.id)}/attempts`, undefined, outsider)).status).toBe(403)
    expect((await h.api('GET', `${path(webhook.id, record.id)}/attempts`)).body).toHaveLength(1)
  })
})

describe('attempt storage', () => {
  const outcome = { kind: 'success' as const, responseStatus: 200, responseBody: '', durationMillis: 3 }
  const save = (records: WebhookRecordRepository, deliveryId: string, attempt: number) =>
    records.saveDelivery(
      'ns',
      'wh',
      deliveryId,
      (previous) =>
        recordAfterAttempt(previous, {
          webhook: 'wh',
          deliveryId,
          attempt,
          status: 'retrying',
          events: [],
          source: { eventIds: [], after: null, last: '0' },
          outcome,
          startedAt: T0,
          finishedAt: T0,
        }),
      { attempt: attemptRecord({ attempt, outcome, startedAt: T0 + attempt, nextAttemptAt: null }) },
    )

  it('replaces a re-run attempt and drops attempts with their record past 128', async () => {
    const backend = new LocalBackend(createStorage())
    const records = new WebhookRecordRepository(backend)
    await save(records, 'whdel-000', 1)
    await save(records, 'whdel-000', 2)
    await save(records, 'whdel-000', 2)
    expect((await records.listAttempts('ns', 'wh', 'whdel-000')).map((a) => a.attempt)).toEqual([1, 2])
    for (let i = 1; i <= 128; i++) await save(records, `whdel-${String(i).padStart(3, '0')}`, 1)
    expect(await records.getDelivery('ns', 'wh', 'whdel-000')).toBeNull()
    expect(await records.listAttempts('ns', 'wh', 'whdel-000')).toEqual([])
    expect(await records.listAttempts('ns', 'wh', 'whdel-001')).toHaveLength(1)
    await records.deleteDeliveries('ns', 'wh')
    expect(await records.listAttempts('ns', 'wh', 'whdel-001')).toEqual([])
    await backend.close()
  })
})
