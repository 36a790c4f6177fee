import type { DeliveryContext, DeliveryEmitted, DeliveryEvent } from './types'

/**
 * What the delivery actor emits (records, metrics and system events are written from these at
 * the edge), as pure functions of its context. The machine's emit actions call them.
 */

type AttemptEvent = Extract<DeliveryEvent, { type: 'ATTEMPT_SUCCEEDED' | 'ATTEMPT_FAILED' }>
type Emitted<T extends DeliveryEmitted['type']> = Extract<DeliveryEmitted, { type: T }>

/** What a delivery's outcome names: the webhook, the batch in flight and its attempts. */
const ofBatch = (context: DeliveryContext) => ({
  webhookId: context.webhookId,
  deliveryId: context.batch!.deliveryId,
  attempts: context.batch!.attempts,
})

/** The batch in flight is delivered. */
export function succeeded(context: DeliveryContext): Emitted<'delivery.succeeded'> {
  return { type: 'delivery.succeeded', ...ofBatch(context), eventIds: context.batch!.eventIds }
}

/** The batch in flight failed for good: its events are dropped. */
export function failed(context: DeliveryContext): Emitted<'delivery.failed'> {
  return { type: 'delivery.failed', ...ofBatch(context), droppedEvents: context.batch!.eventIds }
}

/** One record per attempt, after the attempt was counted and any retry scheduled. */
export function attempted(context: DeliveryContext, event: AttemptEvent): Emitted<'delivery.attempted'> {
  const { type: _type, ...report } = event
  const batch = context.batch!
  const status = report.outcome.kind === 'success' ? 'success' : context.nextAttemptAt === null ? 'failed' : 'retrying'
  return {
    type: 'delivery.attempted',
    webhookId: context.webhookId,
    deliveryId: batch.deliveryId,
    attempt: batch.attempts,
    status,
    eventIds: batch.eventIds,
    report,
    nextAttemptAt: context.nextAttemptAt,
  }
}

export function quarantined(context: DeliveryContext): Emitted<'webhook.quarantined'> {
  return { type: 'webhook.quarantined', webhookId: context.webhookId, quarantinedUntil: context.quarantinedUntil! }
}

/** Released by the API (`RELEASE`) or because the quarantine ran out. */
export function released(context: DeliveryContext, event: DeliveryEvent): Emitted<'webhook.released'> {
  return {
    type: 'webhook.released',
    webhookId: context.webhookId,
    reason: event.type === 'RELEASE' ? 'manual' : 'expired',
    now: context.now,
  }
}
