import type { WebhookCall } from '../ports'
import { conflict, invalid, notFound } from '../../common/errors'
import { makeEvent } from '../../events/factory'
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
} from '../delivery/record'
import { readSelection } from '../delivery/log-range'
import type { AttemptRecord } from '../delivery/attempt-record'
import { deliveryStateView, type DeliveryStateView } from '../../../machines/webhook-delivery/policy'
import type { DeliveryContext } from '../../../machines/webhook-delivery/types'
import { webhookView, type WebhookRecord, type WebhookView } from './model'
import { storedBufferCount } from '../delivery/buffer-count'
import { configEvent, loadWebhook, signalChange } from './service'
import { generateSecret } from '../protocol/signing'

/** Secret reveal and rotation, quarantine release, test send, records, metrics and state. */

/** `GET .../secret`: the current secret; a manager's action, audited as a read. */
export async function revealSecret(ctx: WebhookCall, id: string): Promise<{ secret: string }> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  return { secret: (await loadWebhook(ctx, id)).secret }
}

/** A new secret; the previous one keeps signing (second signature) for `WEBHOOK_SECRET_OVERLAP`. */
export async function rotateSecret(
  ctx: WebhookCall,
  id: string,
): Promise<{ secret: string; previousSecretValidUntil: string }> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  const { settings } = ctx.services.webhookRuntime
  const { webhooks } = ctx.services
  const now = ctx.services.clock.now()
  const record = await webhooks.mutate(ctx.ns, id, (current) => {
    if (!current) throw notFound('webhook', id)
    const next: WebhookRecord = {
      ...current,
      secret: generateSecret(),
      previousSecret: current.secret,
      previousSecretValidUntil: new Date(now + settings.secretOverlapMs).toISOString(),
      secretRotatedAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
    }
    return { next, also: () => ({ events: [configEvent(ctx, 'config.webhook.updated', next)] }), result: next }
  })
  await signalChange(ctx, 'changed', id)
  return { secret: record.secret, previousSecretValidUntil: record.previousSecretValidUntil! }
}

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
