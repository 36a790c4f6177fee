import type { WebhookEnginePorts } from '../ports'
import { logger } from '../../app/logger'
import { makeEvent } from '../../events/factory'
import { parseWebhookRef } from '../../../storage/repositories/webhook-keys'
import type { DeliveryEmitted } from '../../../machines/webhook-delivery/types'
import type { WebhookRuntime } from './runtime'
import { configSnapshot, type WebhookRecord } from '../configuration/model'
import {
  observeDeliveryAttempt,
  setActorStates,
  setBufferedEvents,
  setLeaseOwnership,
} from '../../observability/metrics'

/** `config.webhook.updated` for a change the engine made itself (quarantine start and end): no actor. */
function systemConfigEvent(services: Pick<WebhookEnginePorts, 'clock' | 'events'>, ns: string, record: WebhookRecord) {
  return makeEvent(services.clock, ns, 'config.webhook.updated', {
    webhook: record.id,
    actor: {},
    config: configSnapshot(record),
  })
}

const iso = (ms: number | null | undefined) => (ms == null ? undefined : new Date(ms).toISOString())

/**
 * Acts on what a delivery actor emits: one log line per attempt and outcome, the quarantine
 * timestamps on the webhook document, and the `rate_limited` pacing notice as a system event
 * (appended to the namespace event log, so it reaches this webhook like any other event).
 * Records and metrics are written by the deliverBatch adapter itself, before the machine moves on.
 */
export async function handleEmitted(
  services: Pick<WebhookEnginePorts, 'clock' | 'events'>,
  runtime: WebhookRuntime,
  emitted: DeliveryEmitted,
): Promise<void> {
  const { ns, id } = parseWebhookRef(emitted.webhookId)
  const where = { namespace: ns, webhook: id }
  switch (emitted.type) {
    case 'delivery.attempted':
      observeDeliveryAttempt(emitted.report.outcome.kind, emitted.report.outcome.durationMillis / 1000)
      logger.info('webhook delivery attempt', {
        ...where,
        deliveryId: emitted.deliveryId,
        attempt: emitted.attempt,
        status: emitted.status,
        events: emitted.eventIds.length,
        responseStatus: emitted.report.outcome.responseStatus,
        durationMillis: emitted.report.outcome.durationMillis,
        ...(emitted.report.outcome.error ? { error: emitted.report.outcome.error.slice(0, 200) } : {}),
        ...(emitted.nextAttemptAt ? { nextAttemptAt: iso(emitted.nextAttemptAt) } : {}),
      })
      return
    case 'delivery.succeeded':
    case 'delivery.failed':
      return
    case 'webhook.quarantined':
      logger.warn('webhook quarantined', { ...where, quarantinedUntil: iso(emitted.quarantinedUntil) })
      await runtime.webhooks.mutate(ns, id, (current) => ({
        next: current && {
          ...current,
          quarantinedAt: new Date(services.clock.now()).toISOString(),
          quarantinedUntil: iso(emitted.quarantinedUntil),
        },
        also: (stored) => (stored ? { events: [systemConfigEvent(services, ns, stored)] } : {}),
        result: undefined,
      }))
      return
    case 'webhook.released':
      logger.info('webhook released', { ...where, reason: emitted.reason })
      await runtime.webhooks.mutate(ns, id, (current) => {
        if (!current?.quarantinedUntil) return { next: current, result: undefined }
        const { quarantinedUntil: _ended, ...rest } = current
        // A manual release already announced itself through the API; the end of the quarantine time does here.
        return {
          next: rest,
          also: (stored) =>
            stored && emitted.reason === 'expired' ? { events: [systemConfigEvent(services, ns, stored)] } : {},
          result: undefined,
        }
      })
      return
    case 'webhook.rate_limited': {
      logger.info('webhook paced against backlog', { ...where, bufferedEvents: emitted.bufferedEvents })
      const event = makeEvent(services.clock, ns, 'webhook.rate_limited', {
        webhook: id,
        reason: 'rate_limited',
        droppedEvents: 0,
        bufferedEvents: emitted.bufferedEvents,
      })
      await services.events.append([event])
      return
    }
  }
}

export const stateName = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

/** Actors per state, buffered events and leases held by this process, read at each scrape. */
export function reportActorMetrics(snapshots: { value: unknown; context: { bufferedEvents: number } }[]): void {
  const counts: Record<string, number> = {}
  let buffered = 0
  for (const snapshot of snapshots) {
    const state = stateName(snapshot.value)
    counts[state] = (counts[state] ?? 0) + 1
    buffered += snapshot.context.bufferedEvents
  }
  setActorStates('webhook-delivery', counts)
  setBufferedEvents(buffered)
  setLeaseOwnership(snapshots.length)
}
