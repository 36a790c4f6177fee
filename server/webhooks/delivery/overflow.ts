import type { NamespaceEvent } from '../../events/schemas'

/**
 * Buffer overflow as a pure plan (spec 6.6, 6.7 item 8). A push that does not fit drops the
 * oldest events (and the buffer keeps one slot for the notice), then queues ONE
 * `webhook.rate_limited` (`buffer_overflow`) notice that reports exactly what this push
 * dropped. A dropped earlier notice passes its own count on, so no gap goes unreported.
 */

export interface PushPlan {
  /** Items to pop from the front of the buffer. */
  popFront: number
  /** Whether the push drops anything, and so queues a notice. */
  overflows: boolean
}

/**
 * How a push of `incoming` events onto a buffer of `length` with capacity `cap` fits.
 * @example planPush(5000, 1, 5000) // { popFront: 2, overflows: true }
 */
export function planPush(length: number, incoming: number, cap: number): PushPlan {
  if (length + incoming <= cap) return { popFront: 0, overflows: false }
  const over = length + incoming + 1 - cap
  return { popFront: Math.min(over, length), overflows: true }
}

/** Incoming events that still do not fit after the front was popped (oldest first). */
export function incomingToDrop(lengthAfterPop: number, incoming: number, cap: number): number {
  return Math.min(incoming, Math.max(0, lengthAfterPop + incoming + 1 - cap))
}

export const isOverflowNotice = (event: NamespaceEvent): boolean =>
  event.type === 'webhook.rate_limited' && (event.data as { reason?: string }).reason === 'buffer_overflow'

/** What dropped items add up to: one per event, a dropped notice's own count for a notice. */
export function droppedEventCount(dropped: NamespaceEvent[]): { events: number; reported: number } {
  let events = 0
  let reported = 0
  for (const item of dropped) {
    if (isOverflowNotice(item)) reported += Number((item.data as { droppedEvents?: number }).droppedEvents ?? 0)
    else events++
  }
  return { events, reported: reported + events }
}
