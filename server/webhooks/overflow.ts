/**
 * Buffer-overflow notices (spec 6.6, 6.7 item 8) as a pure plan: when pushing to a full buffer
 * drops the oldest events, ONE `webhook.rate_limited` (`buffer_overflow`) notice is queued
 * behind the new events; while it waits in the buffer, further drops accumulate and go into the
 * next notice. The router is the only writer of buffers and deliveries only remove from the
 * front, so counting the events queued behind the notice tells whether it is still buffered.
 */

/** Per-webhook bookkeeping, persisted between pushes. */
export interface OverflowState {
  /** Event id of the notice waiting in the buffer, or null. */
  noticeId: string | null
  /** Drops the waiting notice reports (re-counted if the notice itself is dropped). */
  noticeDropped: number
  /** Events queued behind the waiting notice. */
  behindNotice: number
  /** Drops not reported by any notice yet. */
  unreported: number
}

export const EMPTY_OVERFLOW: OverflowState = { noticeId: null, noticeDropped: 0, behindNotice: 0, unreported: 0 }

export interface OverflowPlan {
  /** Queue a notice with these counts behind the incoming events, or null. */
  notice: { droppedEvents: number; bufferedEvents: number } | null
  /** State to store once the push is done (set `noticeId` when a notice is pushed). */
  next: OverflowState
}

/**
 * Plans one push of `incoming` events onto a buffer holding `length` events with capacity `cap`.
 * @example planOverflow(EMPTY_OVERFLOW, 5000, 1, 5000).notice // { droppedEvents: 2, bufferedEvents: 5000 }
 */
export function planOverflow(state: OverflowState, length: number, incoming: number, cap: number): OverflowPlan {
  const next = { ...state }
  const drops = Math.max(0, length + incoming - cap)
  if (next.noticeId) {
    // Position of the notice from the front; it left the buffer when nothing is queued ahead of it anymore.
    const position = length - next.behindNotice - 1
    if (position < 0) Object.assign(next, { noticeId: null, noticeDropped: 0, behindNotice: 0 })
    else if (drops > position) {
      // The notice itself falls off the front: what it reported is reported again by the next one.
      Object.assign(next, { noticeId: null, unreported: next.unreported + next.noticeDropped, noticeDropped: 0, behindNotice: 0 })
    }
  }
  next.unreported += drops
  if (next.noticeId || next.unreported === 0) {
    if (next.noticeId) next.behindNotice += incoming
    return { notice: null, next }
  }
  // The notice takes one slot too, which may push out one more event.
  const withNotice = Math.max(0, length + incoming + 1 - cap)
  const droppedEvents = next.unreported + (withNotice - drops)
  return {
    notice: { droppedEvents, bufferedEvents: Math.min(cap, length + incoming + 1) },
    next: { noticeId: null, noticeDropped: droppedEvents, behindNotice: 0, unreported: 0 },
  }
}
