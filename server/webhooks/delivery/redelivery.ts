import type { EventLogRepository } from '../../../storage/repositories/event-log'
import { compareCursors } from '../../../storage/repositories/event-log'
import type { WebhookRecordRepository } from '../../../storage/repositories/webhook-records'
import type { NamespaceEvent } from '../../events/schemas'
import type { Redelivery } from '../../../storage/model/delivery'

export type { Redelivery } from '../../../storage/model/delivery'

/**
 * Resend and recover (#14) on the event-log design: a delivery's events stay in the namespace log
 * until `LOG_RETENTION`, so a redelivery names them (ids and the log range holding them) and the
 * owning process reads them back. Redeliveries wait in a per-webhook queue; each one is due once
 * the webhook's feed has delivered everything that was buffered when it was asked for (`position`,
 * the log's end then): it goes to the back of the queue and keeps order with what was queued then.
 */

/** Where a delivery's events are: their ids and the log range holding them (`after` exclusive, `last` inclusive). */
export interface DeliveryEventRefs {
  ids: string[]
  after: string | null
  last: string
}

/** Redeliveries queued per webhook, at most. */
export const REDELIVERIES_KEPT = 1_000

/**
 * Reads the events `refs` names from the log; `missing` are those it no longer holds (past retention).
 * @example const { events, missing } = await readDeliveryEvents(log, 'acme', refs)
 */
export async function readDeliveryEvents(
  log: EventLogRepository<NamespaceEvent>,
  ns: string,
  refs: DeliveryEventRefs,
): Promise<{ events: NamespaceEvent[]; missing: string[] }> {
  const wanted = new Set(refs.ids)
  const found = new Map<string, NamespaceEvent>()
  let after = refs.after
  for (;;) {
    const page = await log.read(ns, after, 1_000)
    for (const entry of page)
      if (compareCursors(entry.cursor, refs.last) <= 0 && wanted.has(entry.value.id))
        found.set(entry.value.id, entry.value)
    if (page.length === 0 || compareCursors(page[page.length - 1].cursor, refs.last) >= 0 || found.size === wanted.size)
      break
    after = page[page.length - 1].cursor
  }
  return {
    events: refs.ids.flatMap((eventId) => found.get(eventId) ?? []),
    missing: refs.ids.filter((eventId) => !found.has(eventId)),
  }
}

/**
 * The owning process's view of a webhook's redelivery queue (loaded at adoption and on every
 * change signal); the feed asks it what is due and tells it what is done.
 */
export class RedeliveryQueue {
  private items: Redelivery[] = []

  constructor(
    private readonly records: WebhookRecordRepository,
    readonly ns: string,
    readonly id: string,
  ) {}

  async load(): Promise<void> {
    this.items = await this.records.listRedeliveries(this.ns, this.id)
  }

  /** Events waiting in the queue, except the redelivery in flight (`inFlight`). */
  waiting(inFlight: string | undefined): number {
    return this.items.reduce((sum, item) => sum + (item.deliveryId === inFlight ? 0 : item.eventIds.length), 0)
  }

  /** The log position regular batches must not pass while the head redelivery waits; null when none waits. */
  boundary(): string | null | undefined {
    return this.items.length ? this.items[0].position : undefined
  }

  /** The head redelivery when everything buffered before its position was taken (`firstPending`: the oldest waiting entry). */
  due(scannedTo: string | null, firstPending: string | null): Redelivery | null {
    const head = this.items[0]
    if (!head || compareCursors(scannedTo, head.position) < 0) return null
    return firstPending === null || compareCursors(firstPending, head.position) > 0 ? head : null
  }

  /** The redelivery `deliveryId` is delivered or failed for good: it leaves the queue. */
  async done(deliveryId: string): Promise<void> {
    if (!this.items.some((item) => item.deliveryId === deliveryId)) return
    this.items = this.items.filter((item) => item.deliveryId !== deliveryId)
    await this.records.removeRedelivery(this.ns, this.id, deliveryId)
  }
}
