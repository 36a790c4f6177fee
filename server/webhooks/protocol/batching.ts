import { TimeSlice } from '../../common/time-slice'
import type { NamespaceEvent } from '../../events/schemas'
import { deliveredEvent, deliveredEventBytes, deliveredUtf8, rememberedDelivered } from './delivered-event'
import type { DeliveredEvent, FittedEvent } from './event-fit'

/** Per-delivery limits. */
interface BatchLimits {
  maxEvents: number
  maxBytes: number
}

const DEFAULT_BATCH_LIMITS: BatchLimits = { maxEvents: 100, maxBytes: 512 * 1024 }

/** Bytes of the envelope around the events: `{"version":1,"events":[` + `]}`. */
const ENVELOPE_OVERHEAD = Buffer.byteLength('{"version":1,"events":[]}')

/** Bytes one event may take: an event alone in a delivery still keeps the body within 512 KB. */
export const MAX_EVENT_BYTES = DEFAULT_BATCH_LIMITS.maxBytes - ENVELOPE_OVERHEAD

/**
 * A test send is a delivery of its own: its record says `test: true`, which must never cover
 * real events (#14 conformance review).
 */
const deliveredAlone = (event: { type: string }): boolean => event.type === 'webhook.test'

/**
 * Takes the next batch from a buffer ordered oldest first: as many leading events as fit in
 * both limits, and always at least one so an oversized event cannot block the queue forever (it
 * goes out cut to `MAX_EVENT_BYTES`, event-fit.ts, and is counted at its cut size, the cut kept
 * for the envelope, delivered-event.ts).
 * A `webhook.test` event is always a batch by itself (the batch ends before it, or is just it).
 * Measuring takes turns with the rest of the process (an event's data is outside input).
 * @example (await takeBatch(buffer)).length // <= 100
 */
export async function takeBatch<E extends NamespaceEvent>(
  events: readonly E[],
  limits: BatchLimits = DEFAULT_BATCH_LIMITS,
): Promise<E[]> {
  const slice = new TimeSlice()
  const batch: E[] = []
  let bytes = ENVELOPE_OVERHEAD
  for (const event of events) {
    if (batch.length >= limits.maxEvents) break
    if (deliveredAlone(event)) {
      if (batch.length === 0) batch.push(event)
      break
    }
    // One comma separates each event from the previous one.
    const bytesOf =
      rememberedDelivered(event, MAX_EVENT_BYTES)?.bytes ?? (await deliveredEventBytes(event, MAX_EVENT_BYTES, slice))
    const size = bytesOf + (batch.length > 0 ? 1 : 0)
    if (batch.length > 0 && bytes + size > limits.maxBytes) break
    batch.push(event)
    bytes += size
  }
  return batch
}

/** A delivery body and the exact bytes that are signed and sent. */
interface Envelope {
  envelope: { version: 1; events: DeliveredEvent[] }
  body: string
}

/**
 * Builds the delivery envelope and serialises it once; sign and send `body` as is. An event past
 * `MAX_EVENT_BYTES` goes out cut (`payloadTruncated: true`, cut once: delivered-event.ts); the body is what `JSON.stringify`
 * of the envelope gives, each event serialised once (taking turns with the rest of the process).
 * @example (await envelope([event])).body // '{"version":1,"events":[{...}]}'
 */
export async function envelope(events: NamespaceEvent[]): Promise<Envelope> {
  const slice = new TimeSlice()
  const fitted: FittedEvent[] = []
  for (const event of events)
    fitted.push(
      rememberedDelivered(event, MAX_EVENT_BYTES)?.fitted ?? (await deliveredEvent(event, MAX_EVENT_BYTES, slice)),
    )
  return {
    envelope: { version: 1, events: fitted.map((entry) => entry.event) },
    body: `{"version":1,"events":[${fitted.map((entry) => entry.json).join(',')}]}`,
  }
}

const BODY_START = Buffer.from('{"version":1,"events":[')
const BODY_END = Buffer.from(']}')
const COMMA = 0x2c

/**
 * The bytes of `(await envelope(events)).body`, the body signed and sent, copied from each event's
 * kept bytes (delivered-event.ts `deliveredUtf8`) into one buffer; an event not kept (past 16 KB)
 * is encoded here. (`Buffer.concat` of the events and their commas took 2-3x the copies alone.)
 * @example (await envelopeBytes([event])).toString() === (await envelope([event])).body // true
 */
export async function envelopeBytes(events: NamespaceEvent[]): Promise<Buffer> {
  const slice = new TimeSlice()
  const parts: Buffer[] = []
  let length = BODY_START.length + BODY_END.length + Math.max(0, events.length - 1)
  for (const event of events) {
    const kept = rememberedDelivered(event, MAX_EVENT_BYTES)
    const bytes = kept ? deliveredUtf8(kept) : Buffer.from((await deliveredEvent(event, MAX_EVENT_BYTES, slice)).json)
    parts.push(bytes)
    length += bytes.length
  }
  const body = Buffer.allocUnsafe(length)
  body.set(BODY_START, 0)
  let at = BODY_START.length
  for (const [index, bytes] of parts.entries()) {
    if (index > 0) body[at++] = COMMA
    body.set(bytes, at)
    at += bytes.length
  }
  body.set(BODY_END, at)
  return body
}
