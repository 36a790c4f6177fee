import { afterEach, describe, expect, it } from 'vitest'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import type { Backend } from '../../storage'
import { RECORDS_KEPT, type StoredDeliveryRecord } from '../../storage/model/delivery'
import { webhookKeys } from '../../storage/repositories/keys'
import { WebhookRecordRepository } from '../../storage/repositories/webhook-records'
import { pageDeliveryIndexes } from '../../storage/migrations/delivery-index-pages'
import {
  addToIndex,
  indexedIds,
  PAGE_SIZE,
  PageNeeded,
  pageNeededNext,
  type DeliveryIndex,
} from '../../storage/repositories/delivery-index'

/**
 * The delivery index keeps the last 128 deliveries, oldest dropped first, while a new delivery
 * rewrites only the newest ids and the oldest kept (storage/repositories/delivery-index.ts).
 */
const id = (n: number) => `whdel_${String(n).padStart(6, '0')}`

describe('delivery index (pure)', () => {
  it('keeps exactly the newest 128 in order, drops the others oldest first, reads each page once', () => {
    let index: DeliveryIndex | null = null
    const pages = new Map<number, string[]>()
    const dropped: string[] = []
    const read: number[] = []
    for (let n = 1; n <= 400; n++) {
      const predicted = pageNeededNext(index, RECORDS_KEPT)
      const change = addToIndex(index, id(n), RECORDS_KEPT, (page) => {
        expect(page).toBe(predicted)
        read.push(page)
        return pages.get(page)
      })
      if (change.sealed) pages.set(change.sealed.page, change.sealed.ids)
      for (const page of change.emptied) pages.delete(page)
      dropped.push(...change.dropped)
      index = change.index
      const kept = Math.min(n, RECORDS_KEPT)
      expect(indexedIds(index, (page) => pages.get(page) ?? null)).toEqual(
        Array.from({ length: kept }, (_, i) => id(n - i)),
      )
      expect(dropped).toEqual(Array.from({ length: n - kept }, (_, i) => id(i + 1)))
      // What a delivery rewrites: the newest ids and the oldest kept, never the whole list.
      expect(index.ids.length + (index.tail ?? []).length).toBeLessThanOrEqual(2 * PAGE_SIZE)
    }
    // Pages held: the ones between the newest ids and the tail, no more.
    expect(pages.size).toBe(index!.pages!.length)
    expect(read).toEqual([...new Set(read)])
  })

  it('continues an index written before pages: its ids become the tail, no page is written', () => {
    const old: DeliveryIndex = { ids: Array.from({ length: RECORDS_KEPT }, (_, i) => id(RECORDS_KEPT - i)) }
    expect(pageNeededNext(old, RECORDS_KEPT)).toBeNull()
    const change = addToIndex(old, id(RECORDS_KEPT + 1), RECORDS_KEPT, () => undefined)
    expect(change.sealed).toBeNull()
    expect(change.dropped).toEqual([id(1)])
    expect(change.index.ids).toEqual([id(RECORDS_KEPT + 1)])
    expect(change.index.tail).toHaveLength(RECORDS_KEPT - 1)
    expect(indexedIds(change.index, () => null)[RECORDS_KEPT - 1]).toBe(id(2))
  })

  it('names the page it needs when it was not given', () => {
    let index: DeliveryIndex | null = null
    const pages = new Map<number, string[]>()
    let n = 0
    while (pageNeededNext(index, RECORDS_KEPT) === null || n < RECORDS_KEPT) {
      const change = addToIndex(index, id(++n), RECORDS_KEPT, (page) => pages.get(page))
      if (change.sealed) pages.set(change.sealed.page, change.sealed.ids)
      index = change.index
    }
    const needed = pageNeededNext(index, RECORDS_KEPT)!
    expect(() => addToIndex(index, id(n + 1), RECORDS_KEPT, () => undefined)).toThrow(new PageNeeded(needed))
    // A page found missing (given as empty) drops nothing more and is deleted.
    const change = addToIndex(index, id(n + 1), RECORDS_KEPT, () => [])
    expect(change.emptied).toContain(needed)
  })
})

const backends: Backend[] = []
afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()))
})

describe.each(BACKEND_KINDS)('delivery records past 128 (%s)', (kind) => {
  const record = (deliveryId: string) =>
    ({
      id: deliveryId,
      webhook: 'wh',
      status: 'success',
      attempts: 1,
      createdAt: '2026-01-01T00:00:00.000Z',
      source: { eventIds: [`ev-${deliveryId}`], after: null, last: '1-0' },
    }) as unknown as StoredDeliveryRecord
  const attempt = {
    attempt: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMillis: 1,
    responseStatus: 200,
    responseBody: '',
  }

  async function save(records: WebhookRecordRepository, from: number, to: number): Promise<void> {
    for (let n = from; n <= to; n++)
      await records.saveDelivery('ns', 'wh', id(n), () => record(id(n)), { attempt, firstAttempt: true })
  }

  it('keeps the last 128, pages through them newest first, and drops the others with their attempts', async () => {
    const backend = await makeBackend(kind)
    backends.push(backend)
    await save(new WebhookRecordRepository(backend), 1, 150)
    // Another process (nothing remembered) goes on where this one stopped.
    const records = new WebhookRecordRepository(backend)
    await save(records, 151, 170)
    const listed: string[] = []
    let cursor: string | undefined
    do {
      const page = await records.listDeliveries('ns', 'wh', 50, cursor)
      listed.push(...page.items.map((item) => item.id))
      cursor = page.next ?? undefined
    } while (cursor)
    expect(listed).toEqual(Array.from({ length: RECORDS_KEPT }, (_, i) => id(170 - i)))
    expect(await records.getDelivery('ns', 'wh', id(42))).toBeNull()
    expect(await records.listAttempts('ns', 'wh', id(42))).toEqual([])
    expect(await records.getDelivery('ns', 'wh', id(43))).toMatchObject({ id: id(43) })
    expect(await records.listAttempts('ns', 'wh', id(43))).toHaveLength(1)
    // A retry of a delivery kept updates its record and leaves the index as it is.
    await records.saveDelivery('ns', 'wh', id(170), () => ({ ...record(id(170)), attempts: 2 }))
    expect((await records.listDeliveries('ns', 'wh', 1)).items[0]).toMatchObject({ id: id(170), attempts: 2 })
    expect((await records.listDeliveries('ns', 'wh', 1_000)).items).toHaveLength(RECORDS_KEPT)
    const index = await backend.keyValue.get<DeliveryIndex>(webhookKeys.deliveryIndex('ns', 'wh'))
    expect(JSON.stringify(index).length).toBeLessThan(1_500)

    await records.deleteDeliveries('ns', 'wh')
    expect((await backend.keyValue.keys('ns:{ns}')).filter((key) => key.includes(':wh-deliver'))).toEqual([])
    expect((await records.listDeliveries('ns', 'wh', 10)).items).toEqual([])
  })

  it('pages the indexes stored before pages when the storage is migrated (layout 5), once', async () => {
    const backend = await makeBackend(kind)
    backends.push(backend)
    await save(new WebhookRecordRepository(backend), 1, 40)
    const ids = Array.from({ length: 40 }, (_, i) => id(40 - i))
    await backend.keyValue.set(webhookKeys.deliveryIndex('ns', 'wh'), { ids })
    await backend.keyValue.set(webhookKeys.globalIndex(), { items: { 'ns/wh': true, 'ns/gone': true } })
    expect(await pageDeliveryIndexes(backend)).toBe(1)
    expect(await backend.keyValue.get(webhookKeys.deliveryIndex('ns', 'wh'))).toEqual({
      ids: ids.slice(0, PAGE_SIZE),
      tail: ids.slice(PAGE_SIZE),
    })
    expect(await pageDeliveryIndexes(backend)).toBe(0)
    const records = new WebhookRecordRepository(backend)
    expect((await records.listDeliveries('ns', 'wh', 1_000)).items.map((item) => item.id)).toEqual(ids)
    await save(records, 41, RECORDS_KEPT + 41)
    const listed = (await records.listDeliveries('ns', 'wh', 1_000)).items.map((item) => item.id)
    expect(listed).toEqual(Array.from({ length: RECORDS_KEPT }, (_, i) => id(RECORDS_KEPT + 41 - i)))
  })

  it('continues an index stored before pages', async () => {
    const backend = await makeBackend(kind)
    backends.push(backend)
    const records = new WebhookRecordRepository(backend)
    await save(records, 1, RECORDS_KEPT)
    // The layout before pages: one list of every id.
    const ids = Array.from({ length: RECORDS_KEPT }, (_, i) => id(RECORDS_KEPT - i))
    await backend.keyValue.set(webhookKeys.deliveryIndex('ns', 'wh'), { ids })
    const later = new WebhookRecordRepository(backend)
    await save(later, RECORDS_KEPT + 1, RECORDS_KEPT + 40)
    const listed = (await later.listDeliveries('ns', 'wh', 1_000)).items.map((item) => item.id)
    expect(listed).toEqual(Array.from({ length: RECORDS_KEPT }, (_, i) => id(RECORDS_KEPT + 40 - i)))
    expect(await later.getDelivery('ns', 'wh', id(40))).toBeNull()
    expect(await later.getDelivery('ns', 'wh', id(41))).not.toBeNull()
  })
})
