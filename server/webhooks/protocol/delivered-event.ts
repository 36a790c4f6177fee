import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { stringifyCooperatively } from '../../common/cooperative-json'
import { TimeSlice } from '../../common/time-slice'
import type { NamespaceEvent } from '../../events/schemas'
import { cutEvent, type FittedEvent, type KeyLists } from './event-fit'

/**
 * Cut events kept in memory: a few (each at most one delivery of JSON, 512 KB), enough for the
 * takes, the attempts and the record reads of the oversized events being delivered now. A
 * restart starts empty and cuts again, to the same bytes (the cut is a pure function of the event).
 */
const KEPT = 8

/**
 * Keyed by a digest of the whole event's JSON, not by its id: a hit is the same content, whatever
 * the caller built (tests and fakes reuse ids), and every webhook delivering the event shares it.
 */
const recent = new LRUCache<string, FittedEvent>({ max: KEPT })

/**
 * The event as it goes into a delivery body (protocol/event-fit.ts), and its JSON. An event past
 * `maxBytes` is cut once and the cut served again from a small bounded cache: a batch's attempts
 * and the reads of its delivery record cost writing the event and a SHA-256 of it, not a cut
 * each. All of it takes turns with the rest of the process (an event's data is outside input).
 * The result is shared: never change it.
 * @example (await deliveredEvent(event, MAX_EVENT_BYTES)).json // '{"id":"evt-...",...}'
 */
export async function deliveredEvent(
  event: NamespaceEvent,
  maxBytes: number,
  slice = new TimeSlice(),
): Promise<FittedEvent> {
  const keyLists: KeyLists = new WeakMap()
  const whole = await stringifyCooperatively(event, slice, keyLists)
  if (whole.bytes <= maxBytes) return { event, json: whole.pieces.join('') }
  const hash = createHash('sha256')
  for (const piece of whole.pieces) {
    hash.update(piece)
    await slice.step()
  }
  const key = `${maxBytes}:${hash.digest('base64')}`
  const known = recent.get(key)
  if (known) return known
  const fitted = await cutEvent(event, whole.pieces, maxBytes, slice, keyLists)
  recent.set(key, fitted)
  return fitted
}
