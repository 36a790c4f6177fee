/**
 * Delivery records, attempts, redeliveries and metric counters as storage keeps them
 * (storage/repositories/webhook-records.ts). The domain builds them (server/webhooks/delivery/).
 */

/** Delivery records kept per webhook, oldest dropped first. */
export const RECORDS_KEPT = 128

/** One delivery (a batch and all its attempts), docs/webhooks.md. */
export interface DeliveryRecord {
  id: string
  webhook: string
  test: boolean
  status: 'retrying' | 'success' | 'failed'
  attempts: number
  eventCount: number
  eventTypes: string[]
  payload: string
  payloadTruncated: boolean
  responseStatus: number
  responseBody: string
  error?: string
  durationMillis: number
  createdAt: string
  completedAt?: string
}

/**
 * Where a record's payload comes from: its events in the namespace log (ids, and the range after
 * `after` up to `last` holding them). The body sent is the envelope of exactly these events, so it
 * is rebuilt byte for byte from the log instead of stored with every record (docs/webhooks.md).
 */
export interface PayloadSource {
  eventIds: string[]
  after: string | null
  last: string
}

/** A delivery record as stored: the spec fields without the payload, plus its source. */
export type StoredDeliveryRecord = Omit<DeliveryRecord, 'payload' | 'payloadTruncated'> & {
  source: PayloadSource
}

/** Records written before payloads were rebuilt from the log carry their payload themselves. */
export type AnyStoredRecord = StoredDeliveryRecord | DeliveryRecord

/** Metric buckets and their sizes. */
export const BUCKETS = { '1m': 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const
export type BucketSize = keyof typeof BUCKETS

/** Counters as stored; `avgDeliveryMillis` is derived when read. */
export interface MetricCounters {
  deliveriesSuccess: number
  deliveriesFailed: number
  eventsSent: number
  eventsDropped: number
  totalDeliveryMillis: number
}

export const ZERO_COUNTERS: MetricCounters = {
  deliveriesSuccess: 0,
  deliveriesFailed: 0,
  eventsSent: 0,
  eventsDropped: 0,
  totalDeliveryMillis: 0,
}

/**
 * One attempt of a delivery as `GET .../deliveries/{deliveryId}/attempts` answers it (#14).
 * The delivery record keeps only the last attempt's fields; this keeps every one.
 */
export interface AttemptRecord {
  /** 1-based. */
  attempt: number
  startedAt: string
  durationMillis: number
  /** 0 when no response arrived (network error, timeout, refused address). */
  responseStatus: number
  /** At most 4 KB (the sender keeps no more). */
  responseBody: string
  error?: string
  /** When the retry of this failed attempt was scheduled for; absent after a success or the last attempt. */
  nextAttemptAt?: string
}

/** A queued redelivery: a new delivery id for the same events, due after `position`. */
export interface Redelivery {
  deliveryId: string
  eventIds: string[]
  after: string | null
  last: string
  /** The log's last entry when it was queued (null: the log was empty). */
  position: string | null
}

/**
 * The attempt list with `next` in it, oldest first. An attempt re-run after a crash has the same
 * number as the interrupted one and replaces it, so the list never holds an attempt twice.
 * @example withAttempt([first], second).map((a) => a.attempt) // [1, 2]
 */
export function withAttempt(attempts: readonly AttemptRecord[], next: AttemptRecord): AttemptRecord[] {
  return [...attempts.filter((existing) => existing.attempt !== next.attempt), next].sort(
    (a, b) => a.attempt - b.attempt,
  )
}
