import type { NamespaceEvent } from '../../events/schemas'
import { envelope } from '../protocol/batching'
import type { AttemptOutcome } from '../../../machines/webhook-delivery/types'

/** Bytes of the delivered body kept in a record. */
const PAYLOAD_LIMIT = 64 * 1024
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

/** What one finished attempt tells the record. */
interface AttemptFacts {
  webhook: string
  deliveryId: string
  attempt: number
  status: DeliveryRecord['status']
  events: NamespaceEvent[]
  source: PayloadSource
  outcome: AttemptOutcome
  startedAt: number
  finishedAt: number
}

/**
 * The API's record: the stored fields and the payload, the envelope of the source's events cut
 * to 64 KB. Events the log no longer holds (past `LOG_RETENTION`) leave an empty, truncated payload.
 */
export function recordView(stored: AnyStoredRecord, events: NamespaceEvent[] | null): DeliveryRecord {
  if (!('source' in stored)) return stored
  const { source, ...fields } = stored
  if (!events || events.length !== source.eventIds.length) return { ...fields, payload: '', payloadTruncated: true }
  const payload = truncateUtf8(envelope(events).body, PAYLOAD_LIMIT)
  return { ...fields, payload: payload.text, payloadTruncated: payload.truncated }
}

/** Cuts a UTF-8 string to at most `limit` bytes without splitting a character. */
function truncateUtf8(text: string, limit: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= limit) return { text, truncated: false }
  // Step back over continuation bytes (10xxxxxx) so no character is split.
  let end = limit
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true }
}

/**
 * The record after an attempt: created at the first attempt, then updated in place. Attempt
 * numbers come from the machine, so re-running an interrupted attempt rewrites the same record.
 * @example recordAfterAttempt(null, facts).attempts // 1
 */
export function recordAfterAttempt(
  previous: Pick<DeliveryRecord, 'attempts' | 'createdAt'> | null,
  facts: AttemptFacts,
): StoredDeliveryRecord {
  const done = facts.status !== 'retrying'
  return {
    id: facts.deliveryId,
    webhook: facts.webhook,
    test: facts.events.some((event) => event.type === 'webhook.test'),
    status: facts.status,
    attempts: Math.max(previous?.attempts ?? 0, facts.attempt),
    eventCount: facts.events.length,
    eventTypes: [...new Set(facts.events.map((event) => event.type))],
    source: facts.source,
    responseStatus: facts.outcome.responseStatus,
    responseBody: facts.outcome.responseBody,
    ...(facts.outcome.error ? { error: facts.outcome.error } : {}),
    durationMillis: facts.outcome.durationMillis,
    // A queued redelivery's record exists before its first attempt (attempts 0): that attempt dates it.
    createdAt: previous && previous.attempts > 0 ? previous.createdAt : new Date(facts.startedAt).toISOString(),
    ...(done ? { completedAt: new Date(facts.finishedAt).toISOString() } : {}),
  }
}

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

/** One bucket in the metrics answer (`{bucket, buckets: [{start, ...}]}`). */
export interface MetricBucket {
  start: string
  deliveriesSuccess: number
  deliveriesFailed: number
  eventsSent: number
  eventsDropped: number
  avgDeliveryMillis: number
}

export function bucketView(start: number, counters: MetricCounters): MetricBucket {
  const attempts = counters.deliveriesSuccess + counters.deliveriesFailed
  return {
    start: new Date(start).toISOString(),
    deliveriesSuccess: counters.deliveriesSuccess,
    deliveriesFailed: counters.deliveriesFailed,
    eventsSent: counters.eventsSent,
    eventsDropped: counters.eventsDropped,
    avgDeliveryMillis: attempts ? Math.round(counters.totalDeliveryMillis / attempts) : 0,
  }
}
