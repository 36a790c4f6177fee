import { LRUCache } from 'lru-cache'
import type { Backend } from '../backend'
import { mergeWrites, type TxPart } from '../tx-part'
import {
  BUCKETS,
  RECORDS_KEPT,
  ZERO_COUNTERS,
  withAttempt,
  type AnyStoredRecord,
  type AttemptRecord,
  type BucketSize,
  type MetricCounters,
  type Redelivery,
  type StoredDeliveryRecord,
} from '../model/delivery'
import { webhookKeys as keys } from './webhook-keys'
import { enterFailed, type FailedLedger } from './failed-deliveries'
import { bucketStart, MetricBucketWriter, type MetricIndex } from './metric-buckets'
import { addToIndex, indexedIds, PageNeeded, pageNeededNext, type DeliveryIndex } from './delivery-index'

interface AttemptList {
  items: AttemptRecord[]
}

/** A sealed page of the delivery index. */
interface IndexPageDoc {
  ids: string[]
}

/** What a `saveDelivery` writes besides the record. */
interface SaveExtras {
  attempt?: AttemptRecord
  metrics?: { at: number; delta: Partial<MetricCounters> }
  mayFail?: boolean
  /** The first attempt of a delivery this process made up: its record and attempts are assumed absent. */
  firstAttempt?: boolean
  /** Written in the same transaction (the cursor moving past the batch this attempt completes). */
  alongside?: TxPart<unknown>
}

/**
 * Values of the keys every attempt of a webhook rewrites (its delivery index and metric buckets),
 * as this process's last write left them. An attempt assumes them and writes in one round trip
 * instead of reading first; should another process have written since, the write finds out and
 * reads (storage/ports.ts `TxOptions.assume`). Bounded: an index is about 4 KB.
 */
const KEYS_REMEMBERED = 10_000

/** What `queueRedeliveries` did: queued, or refused (the queue is full); `waiting`: redeliveries queued now. */
export interface QueueOutcome {
  queued: boolean
  waiting: number
}

/** Delivery records (last 128 per webhook) and metric counters per 1m/1h/1d bucket. */
export class WebhookRecordRepository {
  /** Counter writes and the cache of bucket indexes known stored (metric-buckets.ts). */
  private readonly counters = new MetricBucketWriter()
  private readonly written = new LRUCache<string, { value: unknown }>({ max: KEYS_REMEMBERED })

  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  /** The stored record: its payload is rebuilt from the log by the caller (delivery/record.ts `recordView`). */
  getDelivery(ns: string, webhook: string, deliveryId: string): Promise<AnyStoredRecord | null> {
    return this.backend.keyValue.get<AnyStoredRecord>(keys.delivery(ns, webhook, deliveryId))
  }

  /** Newest first, starting after `cursor` (a delivery id); `next` is the cursor of the following page. */
  async listDeliveries(
    ns: string,
    webhook: string,
    limit: number,
    cursor?: string,
  ): Promise<{ items: AnyStoredRecord[]; next: string | null }> {
    const { ids } = await this.readIndex(ns, webhook)
    const start = cursor ? ids.indexOf(cursor) + 1 : 0
    if (cursor && start === 0) return { items: [], next: null }
    const page = ids.slice(start, start + limit)
    const records = await this.backend.keyValue.getMany<AnyStoredRecord>(
      page.map((id) => keys.delivery(ns, webhook, id)),
    )
    const items = records.filter((record): record is AnyStoredRecord => record !== null)
    return { items, next: start + limit < ids.length ? page[page.length - 1] : null }
  }

  /**
   * Every delivery id of the index, newest first, and the keys of its sealed pages. The pages are
   * read after the index: a delivery in between may have turned the oldest into the tail and
   * deleted it, so a missing page reads the index again.
   */
  private async readIndex(ns: string, webhook: string): Promise<{ ids: string[]; pageKeys: string[] }> {
    for (let attempt = 0; ; attempt++) {
      const index = await this.backend.keyValue.get<DeliveryIndex>(keys.deliveryIndex(ns, webhook))
      const pages = index?.pages ?? []
      const pageKeys = pages.map((entry) => keys.deliveryIndexPage(ns, webhook, entry.page))
      const stored = await this.backend.keyValue.getMany<IndexPageDoc>(pageKeys)
      if (attempt < 3 && stored.some((page) => page === null)) continue
      const byPage = new Map(pages.map((entry, i) => [entry.page, stored[i]?.ids ?? null]))
      return { ids: indexedIds(index, (page) => byPage.get(page) ?? null), pageKeys }
    }
  }

  /** Redeliveries waiting, oldest first. */
  async listRedeliveries(ns: string, webhook: string): Promise<Redelivery[]> {
    return (await this.backend.keyValue.get<{ items: Redelivery[] }>(keys.redeliveries(ns, webhook)))?.items ?? []
  }

  /**
   * Appends redeliveries at the back of the queue, atomically, unless the queue would then hold
   * more than `max` (the domain's limit): then nothing is written and the answer says how many wait.
   */
  queueRedeliveries(ns: string, webhook: string, items: Redelivery[], max: number): Promise<QueueOutcome> {
    const key = keys.redeliveries(ns, webhook)
    return this.backend.keyValue.transact<QueueOutcome>([key], (values) => {
      const queued = (values.get(key) as { items: Redelivery[] } | null)?.items ?? []
      if (queued.length + items.length > max) return { writes: {}, result: { queued: false, waiting: queued.length } }
      return {
        writes: { set: { [key]: { items: [...queued, ...items] } } },
        result: { queued: true, waiting: queued.length + items.length },
      }
    })
  }

  /** Removes a redelivery once it is done. */
  removeRedelivery(ns: string, webhook: string, deliveryId: string): Promise<void> {
    const key = keys.redeliveries(ns, webhook)
    return this.backend.keyValue.transact([key], (values) => {
      const queued = (values.get(key) as { items: Redelivery[] } | null)?.items ?? []
      const kept = queued.filter((item) => item.deliveryId !== deliveryId)
      return { writes: kept.length === queued.length ? {} : { set: { [key]: { items: kept } } }, result: undefined }
    })
  }

  /** Every attempt of a delivery, oldest first (empty for a delivery unknown or recorded before attempts were kept). */
  async listAttempts(ns: string, webhook: string, deliveryId: string): Promise<AttemptRecord[]> {
    return (await this.backend.keyValue.get<AttemptList>(keys.deliveryAttempts(ns, webhook, deliveryId)))?.items ?? []
  }

  /**
   * Writes a record produced by `build` from the stored one, and `attempt` into its attempt list,
   * in one transaction; a new record enters the index and pushes the oldest beyond 128 out, with
   * their attempts. `metrics` adds to the webhook's counters in the same transaction (one round
   * trip per attempt instead of two). `mayFail`: this write may end the delivery as failed; if it
   * does, the record also enters the failed ledger (failed-deliveries.ts), so `recover` finds it.
   */
  saveDelivery(
    ns: string,
    webhook: string,
    deliveryId: string,
    build: (previous: AnyStoredRecord | null) => StoredDeliveryRecord,
    extras: SaveExtras = {},
  ): Promise<StoredDeliveryRecord> {
    const { attempt, metrics, mayFail, firstAttempt, alongside } = extras
    const indexKey = keys.deliveryIndex(ns, webhook)
    const recordKey = keys.delivery(ns, webhook, deliveryId)
    const attemptsKey = keys.deliveryAttempts(ns, webhook, deliveryId)
    const ledgerKey = keys.failedDeliveries(ns, webhook)
    const pageKey = (page: number) => keys.deliveryIndexPage(ns, webhook, page)
    const buckets = metrics ? this.counters.buckets(ns, webhook, metrics.at) : []
    const txKeys = [indexKey, recordKey, attemptsKey, ...(mayFail ? [ledgerKey] : [])]
    // The index page this write may turn into the tail, as far as this process knows the index:
    // read in the same transaction. Known wrong (or not known), the body names it and runs again.
    const remembered = this.written.get(indexKey)?.value as DeliveryIndex | null | undefined
    const next = remembered === undefined ? null : pageNeededNext(remembered, RECORDS_KEPT)
    const needed = next === null ? [] : [next]
    return this.counters.run(buckets, async (metricKeys) => {
      for (;;) {
        const pageKeys = needed.map(pageKey)
        const allKeys = [...txKeys, ...pageKeys, ...metricKeys, ...(alongside?.keys ?? [])]
        const assume = pageKeys.length
          ? null
          : this.assumed([indexKey, ...metricKeys], firstAttempt ? [recordKey, attemptsKey] : [], alongside)
        let seen: { values: Map<string, unknown>; set: Record<string, unknown>; removed: string[] } | null = null
        try {
          const result = await this.backend.keyValue.transact(
            allKeys,
            (values) => {
              const previous = values.get(recordKey) as AnyStoredRecord | null
              const record = build(previous)
              const set: Record<string, unknown> = {
                [recordKey]: record,
                ...(metrics ? this.counters.counted(buckets, values, metrics.delta) : {}),
              }
              const removed: string[] = []
              if (attempt)
                set[attemptsKey] = {
                  items: withAttempt((values.get(attemptsKey) as AttemptList | null)?.items ?? [], attempt),
                }
              if (mayFail && record.status === 'failed') {
                const { ledger, dropped } = enterFailed(values.get(ledgerKey) as FailedLedger | null, record)
                set[ledgerKey] = ledger
                set[keys.failedDelivery(ns, webhook, deliveryId)] = record
                removed.push(...dropped.map((id) => keys.failedDelivery(ns, webhook, id)))
              }
              // A record is stored exactly while its delivery is in the index: a new one enters it.
              if (previous === null) {
                const change = addToIndex(
                  values.get(indexKey) as DeliveryIndex | null,
                  deliveryId,
                  RECORDS_KEPT,
                  (page) =>
                    // A page read and found missing holds nothing more to drop.
                    needed.includes(page) ? ((values.get(pageKey(page)) as IndexPageDoc | null)?.ids ?? []) : undefined,
                )
                set[indexKey] = change.index
                if (change.sealed) set[pageKey(change.sealed.page)] = { ids: change.sealed.ids } satisfies IndexPageDoc
                removed.push(
                  ...change.emptied.map(pageKey),
                  ...change.dropped.flatMap((id) => [
                    keys.delivery(ns, webhook, id),
                    keys.deliveryAttempts(ns, webhook, id),
                  ]),
                )
              }
              seen = { values, set, removed }
              const own = { set, delete: removed }
              return { writes: alongside ? mergeWrites(own, alongside.body(values).writes) : own, result: record }
            },
            assume ? { assume } : {},
          )
          if (seen) this.remember([indexKey, ...metricKeys], seen)
          return result
        } catch (error) {
          if (!(error instanceof PageNeeded) || needed.includes(error.page)) throw error
          needed.push(error.page)
        }
      }
    })
  }

  /**
   * What `keys` hold as this process last wrote them, `absent` as absent, and what `alongside`
   * assumes: all of them, or null when one is unknown (the transaction reads them all then).
   */
  private assumed(known: string[], absent: string[], alongside?: TxPart<unknown>): Map<string, unknown> | null {
    if (alongside && !alongside.assume) return null
    const assume = new Map<string, unknown>(alongside?.assume)
    for (const key of absent) assume.set(key, null)
    for (const key of known) {
      const entry = this.written.get(key)
      if (!entry) return null
      assume.set(key, entry.value)
    }
    return assume
  }

  /** Keeps what a committed transaction left in `keys`: its writes, or the values it ran on. */
  private remember(
    txKeys: string[],
    seen: { values: Map<string, unknown>; set: Record<string, unknown>; removed: string[] },
  ): void {
    for (const key of txKeys)
      this.written.set(key, {
        value: key in seen.set ? seen.set[key] : seen.removed.includes(key) ? null : (seen.values.get(key) ?? null),
      })
  }

  /** Failed deliveries kept for `recover` (oldest first), beyond the 128 records. */
  async listFailedDeliveries(ns: string, webhook: string): Promise<StoredDeliveryRecord[]> {
    const ledger = await this.backend.keyValue.get<FailedLedger>(keys.failedDeliveries(ns, webhook))
    const ids = ledger?.items.map((item) => item.id) ?? []
    const records = await this.backend.keyValue.getMany<StoredDeliveryRecord>(
      ids.map((id) => keys.failedDelivery(ns, webhook, id)),
    )
    return records.filter((record): record is StoredDeliveryRecord => record !== null)
  }

  /**
   * Adds to the counters of the 1m, 1h and 1d buckets containing `at`, atomically; a bucket's
   * first write also enters its start in the size's index, which the retention pass prunes by.
   */
  addMetrics(ns: string, webhook: string, at: number, delta: Partial<MetricCounters>): Promise<void> {
    const buckets = this.counters.buckets(ns, webhook, at)
    return this.counters.run(buckets, async (metricKeys) => {
      let seen: { values: Map<string, unknown>; set: Record<string, unknown>; removed: string[] } | null = null
      await this.backend.keyValue.transact(metricKeys, (values) => {
        seen = { values, set: this.counters.counted(buckets, values, delta), removed: [] }
        return { writes: { set: seen.set }, result: undefined }
      })
      if (seen) this.remember(metricKeys, seen)
    })
  }

  /** Removes the buckets of each size that start before that size's cutoff; returns how many went. */
  async pruneMetrics(ns: string, webhook: string, cutoffs: Record<BucketSize, number>): Promise<number> {
    let removed = 0
    for (const size of Object.keys(BUCKETS) as BucketSize[]) {
      const index = keys.metricsIndex(ns, webhook, size)
      removed += await this.backend.keyValue.transact([index], (values) => {
        const starts = (values.get(index) as MetricIndex | null)?.starts ?? []
        const old = starts.filter((start) => start < cutoffs[size])
        if (old.length === 0) return { writes: {}, result: 0 }
        // Whatever this process remembers of them is stale now (and read again by the next write).
        this.written.delete(index)
        for (const start of old) this.written.delete(keys.metrics(ns, webhook, size, start))
        const kept = starts.filter((start) => start >= cutoffs[size])
        return {
          writes: {
            set: kept.length ? { [index]: { starts: kept } } : {},
            delete: [...old.map((start) => keys.metrics(ns, webhook, size, start)), ...(kept.length ? [] : [index])],
          },
          result: old.length,
        }
      })
    }
    return removed
  }

  /** Removes every metric bucket of a deleted webhook. */
  async deleteMetrics(ns: string, webhook: string): Promise<void> {
    const everything = Object.fromEntries(
      (Object.keys(BUCKETS) as BucketSize[]).map((size) => [size, Number.POSITIVE_INFINITY]),
    ) as Record<BucketSize, number>
    await this.pruneMetrics(ns, webhook, everything)
    this.counters.forget(ns, webhook)
  }

  /** Counters of every bucket of `size` from `since` to `until` (inclusive starts), oldest first. */
  async metrics(
    ns: string,
    webhook: string,
    size: BucketSize,
    since: number,
    until: number,
  ): Promise<{ start: number; counters: MetricCounters }[]> {
    const starts: number[] = []
    for (let start = bucketStart(since, size); start <= until; start += BUCKETS[size]) starts.push(start)
    const stored = await this.backend.keyValue.getMany<MetricCounters>(
      starts.map((start) => keys.metrics(ns, webhook, size, start)),
    )
    return starts.map((start, index) => ({ start, counters: stored[index] ?? ZERO_COUNTERS }))
  }

  /** Removes a deleted webhook's delivery records, their attempts and the failed ledger (metric buckets: deleteMetrics). */
  async deleteDeliveries(ns: string, webhook: string): Promise<void> {
    const [{ ids, pageKeys }, ledger] = await Promise.all([
      this.readIndex(ns, webhook),
      this.backend.keyValue.get<FailedLedger>(keys.failedDeliveries(ns, webhook)),
    ])
    const recordKeys = [
      ...ids.flatMap((id) => [keys.delivery(ns, webhook, id), keys.deliveryAttempts(ns, webhook, id)]),
      ...pageKeys,
      ...(ledger?.items ?? []).map((item) => keys.failedDelivery(ns, webhook, item.id)),
    ]
    this.written.delete(keys.deliveryIndex(ns, webhook))
    await Promise.all([
      ...recordKeys.map((key) => this.backend.keyValue.delete(key)),
      this.backend.keyValue.delete(keys.deliveryIndex(ns, webhook)),
      this.backend.keyValue.delete(keys.failedDeliveries(ns, webhook)),
      this.backend.keyValue.delete(keys.redeliveries(ns, webhook)),
    ])
  }
}

export { bucketStart }
