import type { NamespaceEvent } from '../../events/schemas'
import { envelope } from '../protocol/batching'
import type { AttemptOutcome } from '../../../machines/webhook-delivery/types'
import type {
  AnyStoredRecord,
  DeliveryRecord,
  MetricCounters,
  PayloadSource,
  StoredDeliveryRecord,
} from '../../../storage/model/delivery'

export {
  BUCKETS,
  RECORDS_KEPT,
  ZERO_COUNTERS,
  type AnyStoredRecord,
  type BucketSize,
  type DeliveryRecord,
  type MetricCounters,
  type PayloadSource,
  type StoredDeliveryRecord,
} from '../../../storage/model/delivery'

/** Bytes of the delivered body kept in a record. */
const PAYLOAD_LIMIT = 64 * 1024
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
export async function recordView(stored: AnyStoredRecord, events: NamespaceEvent[] | null): Promise<DeliveryRecord> {
  if (!('source' in stored)) return stored
  const { source, ...fields } = stored
  if (!events || events.length !== source.eventIds.length) return { ...fields, payload: '', payloadTruncated: true }
  const payload = truncateUtf8((await envelope(events)).body, PAYLOAD_LIMIT)
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
