import type { WebhookCall } from '../ports'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../common/errors'
import { newId } from '../../common/ids'
import { requireNamespacePermission } from '../../auth/permissions'
import type { NamespaceEvent } from '../../events/schemas'
import { recordView, type AnyStoredRecord, type DeliveryRecord, type StoredDeliveryRecord } from '../delivery/record'
import { readDeliveryEvents, REDELIVERIES_KEPT, type DeliveryEventRefs, type Redelivery } from '../delivery/redelivery'
import { loadWebhook, signalChange } from './service'

/** Resend one delivery and recover failed ones (#14); the owning process delivers them (delivery/redelivery.ts). */

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
  return planned.map((p) => recordView(p.record, p.events))
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
