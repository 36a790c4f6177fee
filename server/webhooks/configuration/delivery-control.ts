import type { WebhookCall } from '../ports'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../common/errors'
import { newId } from '../../common/ids'
import { makeEvent } from '../../events/factory'
import type { NamespaceEvent } from '../../events/schemas'
import { requireNamespacePermission } from '../../auth/permissions'
import { nowIso } from '../../auth/call-context'
import { bucketStart } from '../../../storage/repositories/webhook-records'
import {
  BUCKETS,
  bucketView,
  recordView,
  type AnyStoredRecord,
  type BucketSize,
  type DeliveryRecord,
  type MetricBucket,
  type StoredDeliveryRecord,
} from '../delivery/record'
import { readDeliveryEvents, REDELIVERIES_KEPT, type DeliveryEventRefs, type Redelivery } from '../delivery/redelivery'
import { readSelection } from '../delivery/log-range'
import type { AttemptRecord } from '../delivery/attempt-record'
import { deliveryStateView, type DeliveryStateView } from '../../../machines/webhook-delivery/policy'
import type { DeliveryContext } from '../../../machines/webhook-delivery/types'
import { webhookView, type WebhookRecord, type WebhookView } from './model'
import { storedBufferCount } from '../delivery/buffer-count'
import { configEvent, loadWebhook, signalChange } from './crud'

/**
 * A webhook's delivery as the API sees and steers it: the actor's state, quarantine release, a test
 * send, delivery records, attempts and metrics, and resend and recovery of deliveries (#14; the
 * owning process delivers them, delivery/redelivery.ts).
 */

/** Reads the persisted actor state (the actor may run in another process). */
async function persistedState(ctx: WebhookCall, id: string): Promise<DeliveryStateView> {
  const { webhooks } = ctx.services
  const { settings } = ctx.services.webhookRuntime
  const [snapshot, stored, redeliveries, cursor] = await Promise.all([
    webhooks.loadSnapshot(ctx.ns, id),
    storedBufferCount(ctx.services.events, webhooks, ctx.ns, id, settings.bufferSize),
    ctx.services.webhookRecords.listRedeliveries(ctx.ns, id),
    webhooks.cursors.get(ctx.ns, id),
  ])
  // Resends and recoveries waiting count too (the one in flight is in the cursor's batch already).
  const inFlight = cursor?.batch?.deliveryId
  const bufferedEvents =
    stored + redeliveries.reduce((sum, item) => sum + (item.deliveryId === inFlight ? 0 : item.eventIds.length), 0)
  const view = snapshot
    ? deliveryStateView(snapshot as { value: unknown; context: DeliveryContext })
    : { state: 'active', bufferedEvents: 0 }
  // The count from the log and the cursor is fresher than the one in the snapshot.
  return { ...view, bufferedEvents }
}

/** `POST .../release`: ends a quarantine now; 409 when the webhook is not quarantined. */
export async function releaseQuarantine(ctx: WebhookCall, id: string): Promise<WebhookView> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  await loadWebhook(ctx, id)
  if ((await persistedState(ctx, id)).state !== 'quarantined')
    throw conflict('webhook_not_quarantined', `webhook "${id}" is not quarantined`)
  const record = await ctx.services.webhooks.mutate(ctx.ns, id, (current) => {
    if (!current) throw notFound('webhook', id)
    const now = nowIso(ctx)
    const { quarantinedUntil: _ended, ...rest } = current
    const next: WebhookRecord = { ...rest, releasedAt: now, updatedAt: now }
    return { next, also: () => ({ events: [configEvent(ctx, 'config.webhook.updated', next)] }), result: next }
  })
  await signalChange(ctx, 'changed', id)
  return webhookView(record)
}

/**
 * `POST .../test`: appends a `webhook.test` event to the namespace's event log; it reaches this
 * webhook only and it is delivered like any other event (its record has `test: true`).
 */
export async function sendTest(ctx: WebhookCall, id: string): Promise<{ event: string }> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  const record = await loadWebhook(ctx, id)
  if (!record.enabled) throw conflict('webhook_disabled', `webhook "${id}" is disabled; enable it to send a test`)
  const event = makeEvent(ctx.services.clock, ctx.ns, 'webhook.test', { webhook: id, message: 'Test event' as const })
  await ctx.services.events.append([event])
  return { event: event.id }
}

/** A stored record with its payload, rebuilt from the namespace log (the bytes that were sent). */
async function withPayload(ctx: WebhookCall, stored: AnyStoredRecord): Promise<DeliveryRecord> {
  if (!('source' in stored)) return recordView(stored, null)
  return recordView(stored, await readSelection(ctx.services.events, ctx.ns, stored.source))
}

export async function listDeliveries(
  ctx: WebhookCall,
  id: string,
  limit: number,
  cursor?: string,
): Promise<{ items: DeliveryRecord[]; next: string | null }> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:read')
  await loadWebhook(ctx, id)
  const page = await ctx.services.webhookRecords.listDeliveries(ctx.ns, id, limit, cursor)
  return { items: await Promise.all(page.items.map((stored) => withPayload(ctx, stored))), next: page.next }
}

export async function getDelivery(ctx: WebhookCall, id: string, deliveryId: string): Promise<DeliveryRecord> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:read')
  await loadWebhook(ctx, id)
  const record = await ctx.services.webhookRecords.getDelivery(ctx.ns, id, deliveryId)
  if (!record) throw notFound('delivery', deliveryId)
  return withPayload(ctx, record)
}

/** `GET .../deliveries/{deliveryId}/attempts`: every attempt of a delivery, oldest first (#14). */
export async function listAttempts(ctx: WebhookCall, id: string, deliveryId: string): Promise<AttemptRecord[]> {
  await getDelivery(ctx, id, deliveryId)
  return ctx.services.webhookRecords.listAttempts(ctx.ns, id, deliveryId)
}

/** Buckets answered by default (and at most) per size. */
const DEFAULT_SPAN: Record<BucketSize, number> = { '1m': 60, '1h': 24, '1d': 30 }
const MAX_BUCKETS = 1500

/** `GET .../metrics?since&until&bucket`: counters per bucket, oldest first, empty buckets included. */
export async function webhookMetrics(
  ctx: WebhookCall,
  id: string,
  query: { bucket: BucketSize; since?: string; until?: string },
): Promise<{ bucket: BucketSize; buckets: MetricBucket[] }> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:read')
  await loadWebhook(ctx, id)
  const size = BUCKETS[query.bucket]
  const until = query.until ? Date.parse(query.until) : ctx.services.clock.now()
  const since = query.since
    ? Date.parse(query.since)
    : bucketStart(until, query.bucket) - (DEFAULT_SPAN[query.bucket] - 1) * size
  if (since > until)
    throw invalid('invalid_range', 'since must not be after until', [
      { path: 'since', message: 'must not be after until' },
    ])
  if ((until - since) / size > MAX_BUCKETS) {
    throw invalid('range_too_large', `at most ${MAX_BUCKETS} buckets per query; use a larger bucket`, [
      { path: 'since', message: 'range too large for the bucket size' },
    ])
  }
  const rows = await ctx.services.webhookRecords.metrics(ctx.ns, id, query.bucket, since, until)
  return { bucket: query.bucket, buckets: rows.map((row) => bucketView(row.start, row.counters)) }
}

/** `GET .../state`. */
export async function webhookState(ctx: WebhookCall, id: string): Promise<DeliveryStateView> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:read')
  await loadWebhook(ctx, id)
  return persistedState(ctx, id)
}

/** The body of `POST .../recover` (the API and the dashboard's form both parse with it). */
export const RecoverWindow = z
  .object({ since: z.iso.datetime({ offset: true }), until: z.iso.datetime({ offset: true }).optional() })
  .strict()

/** Where a stored record's events are (null for a record written before records kept their source). */
function refsOf(record: AnyStoredRecord): DeliveryEventRefs | null {
  return 'source' in record
    ? { ids: record.source.eventIds, after: record.source.after, last: record.source.last }
    : null
}

/** The record of a queued redelivery, before its first attempt (`attempts: 0`, no response yet). */
function queuedRecord(
  webhook: string,
  deliveryId: string,
  refs: DeliveryEventRefs,
  events: NamespaceEvent[],
  now: number,
): StoredDeliveryRecord {
  return {
    id: deliveryId,
    webhook,
    test: events.some((event) => event.type === 'webhook.test'),
    status: 'retrying',
    attempts: 0,
    eventCount: events.length,
    eventTypes: [...new Set(events.map((event) => event.type))],
    source: { eventIds: events.map((event) => event.id), after: refs.after, last: refs.last },
    responseStatus: 0,
    responseBody: '',
    durationMillis: 0,
    createdAt: new Date(now).toISOString(),
  }
}

/** Queues `events` (found through `refs`) as a new delivery at the back of the webhook's queue; returns its record. */
async function queue(
  ctx: WebhookCall,
  id: string,
  items: { refs: DeliveryEventRefs; events: NamespaceEvent[] }[],
): Promise<DeliveryRecord[]> {
  const { events: log, webhookRecords } = ctx.services
  const now = ctx.services.clock.now()
  // Everything in the log now is queued before these: they keep order with what is waiting.
  const position = await log.lastCursor(ctx.ns)
  const planned = items.map(({ refs, events }) => {
    const ids = events.map((event) => event.id)
    const redelivery: Redelivery = {
      deliveryId: newId('whdel', now),
      eventIds: ids,
      after: refs.after,
      last: refs.last,
      position,
    }
    return { redelivery, events, record: queuedRecord(id, redelivery.deliveryId, refs, events, now) }
  })
  // Queue first: a record missing after a crash is written by the first attempt anyway.
  const outcome = await webhookRecords.queueRedeliveries(
    ctx.ns,
    id,
    planned.map((p) => p.redelivery),
    REDELIVERIES_KEPT,
  )
  if (!outcome.queued)
    throw conflict('redelivery_queue_full', `at most ${REDELIVERIES_KEPT} redeliveries may wait; ${outcome.waiting} do`)
  await Promise.all(planned.map((p) => webhookRecords.saveDelivery(ctx.ns, id, p.record.id, () => p.record)))
  await signalChange(ctx, 'changed', id)
  const views: DeliveryRecord[] = []
  for (const p of planned) views.push(await recordView(p.record, p.events))
  return views
}

/**
 * `POST .../deliveries/{deliveryId}/resend`: the same events (same event ids) as a new delivery
 * with a new delivery id and `webhook-id`, at the back of the queue; pacing and quarantine apply.
 * 409 when the log no longer holds its events (past `LOG_RETENTION`) or never recorded them.
 */
export async function resendDelivery(ctx: WebhookCall, id: string, deliveryId: string): Promise<DeliveryRecord> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  await loadWebhook(ctx, id)
  const { webhookRecords, events: log } = ctx.services
  const stored = await webhookRecords.getDelivery(ctx.ns, id, deliveryId)
  if (!stored) throw notFound('delivery', deliveryId)
  const refs = refsOf(stored)
  if (!refs)
    throw conflict(
      'delivery_events_unknown',
      `delivery "${deliveryId}" was recorded before its event ids were kept; it cannot be resent`,
    )
  const { events, missing } = await readDeliveryEvents(log, ctx.ns, refs)
  if (missing.length)
    throw conflict(
      'events_unavailable',
      `the event log no longer holds ${missing.length} of its events (past LOG_RETENTION): ${missing.join(', ')}`,
    )
  const [record] = await queue(ctx, id, [{ refs, events }])
  return record
}

/**
 * `POST .../recover {since, until?}`: re-queues, oldest first, the events of every delivery whose
 * outcome was `failed` and whose first attempt lies in the window, one new delivery each: among
 * the records kept and the failed deliveries kept beyond them (the newest 1,000). `count`
 * is the number of events queued; `unavailable` names the events the log no longer holds.
 */
export async function recoverDeliveries(
  ctx: WebhookCall,
  id: string,
  window: z.infer<typeof RecoverWindow>,
): Promise<{ count: number; unavailable?: string[] }> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  await loadWebhook(ctx, id)
  const now = ctx.services.clock.now()
  const since = Date.parse(window.since)
  const until = window.until ? Date.parse(window.until) : now
  // A window that cannot hold a failed delivery is a mistake worth saying, not an empty answer.
  if (window.until && until <= since)
    throw invalid('invalid_range', 'until must be after since', [{ path: 'until', message: 'must be after since' }])
  if (since > now)
    throw invalid('invalid_range', 'since must not be in the future', [
      { path: 'since', message: 'must not be in the future' },
    ])
  const { webhookRecords, events: log } = ctx.services
  // The records kept, and the failed ones kept beyond them (a record in both counts once).
  const [{ items: records }, keptFailed] = await Promise.all([
    webhookRecords.listDeliveries(ctx.ns, id, 1_000),
    webhookRecords.listFailedDeliveries(ctx.ns, id),
  ])
  const known = new Set(records.map((record) => record.id))
  const failed = [...records, ...keptFailed.filter((record) => !known.has(record.id))]
    .filter(
      (record) =>
        record.status === 'failed' && Date.parse(record.createdAt) >= since && Date.parse(record.createdAt) <= until,
    )
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
  const items: { refs: DeliveryEventRefs; events: NamespaceEvent[] }[] = []
  const unavailable: string[] = []
  for (const record of failed) {
    const refs = refsOf(record)
    if (!refs) continue
    const { events, missing } = await readDeliveryEvents(log, ctx.ns, refs)
    unavailable.push(...missing)
    if (events.length) items.push({ refs, events })
  }
  if (items.length) await queue(ctx, id, items)
  const count = items.reduce((sum, item) => sum + item.events.length, 0)
  return { count, ...(unavailable.length ? { unavailable } : {}) }
}
