import type { Clock } from '../../common/clock'
import { makeEvent } from '../../events/factory'
import type { NamespaceEvent } from '../../events/schemas'

/**
 * Buffer overflow as a pure rule. The cap counts the events waiting, the
 * batch in flight and overflow notices on their way; only waiting events are dropped, oldest
 * first, and one slot is kept for the ONE `webhook.rate_limited` (`buffer_overflow`) notice that
 * reports exactly what was dropped. A dropped earlier notice passes its own count on, so no gap
 * goes unreported. One notice per gap: while a notice still waits (not yet in a batch), a new drop
 * merges into it: the new notice carries both counts and becomes the webhook's current one (stored
 * with its cursor); any other notice after the cursor is merged already and skipped, so a flood
 * never fills the buffer with notices.
 */

interface Occupancy {
  /** Matching events after the cursor, not yet in a batch. */
  waiting: number
  /** Events of the batch in flight (never dropped). */
  inFlight: number
  /** Overflow notices appended but not yet read back from the log. */
  noticesInTransit: number
}

/**
 * How many of the oldest waiting events must go: none while everything fits in `cap`, else
 * enough that what stays and one new notice fit.
 * @example eventsToDrop({ waiting: 5001, inFlight: 0, noticesInTransit: 0 }, 5000) // 2
 */
export function eventsToDrop(occupancy: Occupancy, cap: number): number {
  const total = occupancy.waiting + occupancy.inFlight + occupancy.noticesInTransit
  return total <= cap ? 0 : Math.min(total + 1 - cap, occupancy.waiting)
}

export const isOverflowNotice = (event: NamespaceEvent): boolean =>
  event.type === 'webhook.rate_limited' && (event.data as { reason?: string }).reason === 'buffer_overflow'

/** What dropped items add up to: one per event, a dropped notice's own count for a notice. */
export function droppedEventCount(dropped: NamespaceEvent[]): { events: number; reported: number } {
  let events = 0
  let reported = 0
  for (const item of dropped) {
    if (isOverflowNotice(item)) reported += noticeCount(item)
    else events++
  }
  return { events, reported: reported + events }
}

/** Drops counted but not yet announced: what they add up to, and the log entry of the last one. */
export interface UnannouncedDrop {
  events: number
  reported: number
  last: string
}

/** `pending` with the entries just dropped (in log order) added. */
export function addDrop(
  pending: UnannouncedDrop | null,
  dropped: { cursor: string; value: NamespaceEvent }[],
): UnannouncedDrop {
  const counts = droppedEventCount(dropped.map((entry) => entry.value))
  return {
    events: (pending?.events ?? 0) + counts.events,
    reported: (pending?.reported ?? 0) + counts.reported,
    last: dropped[dropped.length - 1].cursor,
  }
}

/** What stays unannounced once the write announcing `announced` is stored: the drops counted meanwhile. */
export function afterAnnounced(current: UnannouncedDrop, announced: UnannouncedDrop): UnannouncedDrop | null {
  if (current === announced) return null
  return {
    events: current.events - announced.events,
    reported: current.reported - announced.reported,
    last: current.last,
  }
}

/** The count an overflow notice reports. */
export const noticeCount = (notice: NamespaceEvent): number =>
  Number((notice.data as { droppedEvents?: number }).droppedEvents ?? 0)

/** `drop` with the counts of the waiting notices it replaces added (they are skipped from then on). */
export function mergeIntoDrop(drop: UnannouncedDrop, reported: number): UnannouncedDrop {
  return { ...drop, reported: drop.reported + reported }
}

/**
 * The `webhook.rate_limited` notice announcing `drop` to webhook `id` of `ns`. `bufferedEvents`
 * never says more than the cap: what is counted while writes are on their way can pass it briefly.
 */
export function overflowNotice(
  clock: Clock,
  ns: string,
  id: string,
  drop: UnannouncedDrop,
  bufferedEvents: number,
  cap: number,
): NamespaceEvent {
  return makeEvent(clock, ns, 'webhook.rate_limited', {
    webhook: id,
    reason: 'buffer_overflow' as const,
    droppedEvents: drop.reported,
    bufferedEvents: Math.min(bufferedEvents, cap),
  })
}
