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

/** Events whose JSON is at most this long keep it with them (`byEvent`); larger ones are written again. */
const REMEMBERED_BYTES = 16 * 1024

/**
 * The delivered form of each event object read from the log, while that object lives: the log
 * follower parses an entry once and every webhook's buffer shares it, so the 100 webhooks a
 * fan-out reaches serialise it once instead of twice each (the take measures it, the attempt
 * sends it). Weak: an event no buffer holds any more takes its JSON with it. Only small events:
 * a held large one would keep a second copy of itself alive for as long as it waits. An event
 * object is never changed once read, so its JSON stays right.
 */
const byEvent = new WeakMap<NamespaceEvent, DeliveredForm & { maxBytes: number }>()

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
  return (await remembered(event, maxBytes, slice)).fitted
}

/** The UTF-8 size of `deliveredEvent(event, maxBytes)`'s JSON. */
export async function deliveredEventBytes(
  event: NamespaceEvent,
  maxBytes: number,
  slice = new TimeSlice(),
): Promise<number> {
  return (await remembered(event, maxBytes, slice)).bytes
}

/**
 * What `deliveredEvent` and `deliveredEventBytes` gave for this very event object already, if they
 * keep it; undefined otherwise. Synchronous: a batch of 100 events costs no promise per event
 * (with the process's async hooks on, each await was a good part of the work of a remembered event).
 */
export function rememberedDelivered(event: NamespaceEvent, maxBytes: number): DeliveredForm | undefined {
  const known = byEvent.get(event)
  return known?.maxBytes === maxBytes ? known : undefined
}

interface DeliveredForm {
  fitted: FittedEvent
  bytes: number
  /** Its JSON's UTF-8 bytes, once a body was built from it (`deliveredUtf8`). */
  utf8?: Buffer
}

/**
 * The UTF-8 bytes of `form`'s JSON, encoded once and kept with a remembered event: every webhook's
 * body copies them (a memcpy) instead of joining the JSON strings of its batch and encoding the
 * whole body again (under API load, batches of ~97 events: 50 KB joined and encoded per delivery).
 * Kept only while the event object lives, as its JSON is (events up to 16 KB).
 */
export function deliveredUtf8(form: DeliveredForm): Buffer {
  return (form.utf8 ??= Buffer.from(form.fitted.json))
}

async function remembered(event: NamespaceEvent, maxBytes: number, slice: TimeSlice): Promise<DeliveredForm> {
  const known = rememberedDelivered(event, maxBytes)
  if (known) return known
  const keyLists: KeyLists = new WeakMap()
  const whole = await stringifyCooperatively(event, slice, keyLists)
  if (whole.bytes <= maxBytes) {
    const entry = { maxBytes, fitted: { event, json: whole.pieces.join('') }, bytes: whole.bytes }
    if (whole.bytes <= REMEMBERED_BYTES) byEvent.set(event, entry)
    return entry
  }
  const hash = createHash('sha256')
  for (const piece of whole.pieces) {
    hash.update(piece)
    await slice.step()
  }
  const key = `${maxBytes}:${hash.digest('base64')}`
  const cut = recent.get(key)
  const fitted = cut ?? (await cutEvent(event, whole.pieces, maxBytes, slice, keyLists))
  if (!cut) recent.set(key, fitted)
  return { fitted, bytes: Buffer.byteLength(fitted.json) }
}
