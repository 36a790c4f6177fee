import type { NamespaceEvent } from '../../events/schemas'
import type { WebhookRepository } from '../../../storage/repositories/webhooks'
import { droppedEventCount, incomingToDrop, planPush } from './overflow'

/** Result of routing events into a buffer. */
export interface BufferPush {
  length: number
  /** Events discarded at the cap by this push. */
  dropped: number
  /** The overflow notice queued with this push, if any. */
  notice: NamespaceEvent | null
}

/**
 * Appends routed events to a webhook's buffer (cap `cap`, oldest dropped) and, when anything
 * was dropped, one overflow notice reporting exactly that (see overflow.ts). Only the router
 * pushes; deliveries only take from the front, so the length can only shrink meanwhile.
 */
export async function pushToBuffer(
  webhooks: WebhookRepository,
  ns: string,
  id: string,
  events: NamespaceEvent[],
  cap: number,
  makeNotice: (counts: { droppedEvents: number; bufferedEvents: number }) => NamespaceEvent,
): Promise<BufferPush> {
  // The batch in flight counts towards the cap but is never dropped: it is out of the queue.
  const { queued, inFlight } = await webhooks.bufferState(ns, id)
  const queueCap = Math.max(1, cap - inFlight)
  const plan = planPush(queued, events.length, queueCap)
  if (!plan.overflows) {
    const pushed = await webhooks.pushBuffer(ns, id, events, queueCap)
    return { length: pushed.length + inFlight, dropped: pushed.dropped, notice: null }
  }
  // Popping returns exactly what left the buffer, so the notice can count it.
  const popped = await webhooks.popBuffer(ns, id, plan.popFront)
  const afterPop = (await webhooks.bufferState(ns, id)).queued
  const dropIncoming = incomingToDrop(afterPop, events.length, queueCap)
  const counts = droppedEventCount([...popped, ...events.slice(0, dropIncoming)])
  const kept = events.slice(dropIncoming)
  const notice = makeNotice({ droppedEvents: counts.reported, bufferedEvents: afterPop + kept.length + 1 + inFlight })
  const pushed = await webhooks.pushBuffer(ns, id, [...kept, notice], queueCap)
  return { length: pushed.length + inFlight, dropped: counts.events + pushed.dropped, notice }
}
