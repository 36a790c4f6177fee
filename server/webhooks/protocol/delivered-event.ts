import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { NamespaceEvent } from '../../events/schemas'
import { cutEvent, fitsIn, type FittedEvent } from './event-fit'

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
 * and the reads of its delivery record cost a plain `JSON.stringify` and a SHA-256 of it, not a
 * cut each. The result is shared: never change it.
 * @example deliveredEvent(event, MAX_EVENT_BYTES).json // '{"id":"evt-...",...}'
 */
export function deliveredEvent(event: NamespaceEvent, maxBytes: number): FittedEvent {
  const json = JSON.stringify(event)
  if (fitsIn(json, maxBytes)) return { event, json }
  const key = `${maxBytes}:${createHash('sha256').update(json).digest('base64')}`
  const known = recent.get(key)
  if (known) return known
  const fitted = cutEvent(event, json, maxBytes)
  recent.set(key, fitted)
  return fitted
}
