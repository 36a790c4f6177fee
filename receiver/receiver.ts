import { ReceiverConfigError, WebhookParseError, WebhookVerificationError } from './errors'
import type { Event } from './events.generated'
import { parse } from './parse'
import { RetryLater } from './retry-after'
import { MemoryStore } from './stores/memory'
import type { DedupeStore } from './stores/store'
import { signers, verify, type HeadersLike, type RawBody } from './verify'

type Secrets = string | readonly string[]

/** What a handler learns about the delivery an event came in. */
export interface DeliveryContext {
  /** `webhook-id`: the same on every retry of this delivery. */
  deliveryId: string
  /** `webhook-timestamp` of this attempt, in seconds. */
  timestamp: number
  /** Position of the event in the delivery (0-based) and the delivery's size. */
  index: number
  total: number
}

export interface ReceiverOptions {
  /**
   * Signing secrets (`whsec_...`): any one verifies. During a rotation list the new and the old
   * one. A function is asked on every request (secrets kept elsewhere, changed while running).
   */
  secrets: Secrets | (() => Secrets | Promise<Secrets>)
  /** Handles one event. Throw to have the delivery retried (throw `retryLater(s)` to push back). */
  onEvent(event: Event, context: DeliveryContext): unknown
  /** Where handled deliveries and events are remembered (default: a MemoryStore). */
  store?: DedupeStore
  /** How long marks are kept, in seconds (default 24 h: well past the sender's last retry). */
  dedupeTtlSeconds?: number
  /** Accepted clock distance of `webhook-timestamp`, in seconds (default 300). */
  toleranceSeconds?: number
  /** Seconds to push back with (503 Retry-After) before handling anything, or nothing when not busy. */
  busy?: () => number | null | undefined | Promise<number | null | undefined>
  /** Told about a failing handler (default: one line on stderr with the event id and type, no payload). */
  onError?: (error: unknown, event: Event, context: DeliveryContext) => void
  /** Clock in milliseconds (tests). */
  now?: () => number
}

/** A framework-neutral answer; the adapters write it. */
export interface ReceiverAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** One request as it arrived: the raw body bytes (never a re-serialised JSON) and the headers. */
export interface ReceivedRequest {
  body: RawBody
  headers: HeadersLike
}

export interface WebhookReceiver {
  receive(request: ReceivedRequest): Promise<ReceiverAnswer>
}

const DAY = 24 * 60 * 60

function json(status: number, body: object, headers: Record<string, string> = {}): ReceiverAnswer {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }
}

/** RFC 9457 problem with a stable `code`; `detail` never carries a secret or the payload. */
function problem(status: number, code: string, detail: string, headers: Record<string, string> = {}): ReceiverAnswer {
  const answer = json(status, { type: 'about:blank', title: code.replace(/_/g, ' '), status, code, detail }, headers)
  return { ...answer, headers: { ...answer.headers, 'content-type': 'application/problem+json' } }
}

function pushBack(seconds: number, status: 429 | 503, code: string, detail: string): ReceiverAnswer {
  return problem(status, code, detail, { 'retry-after': String(seconds) })
}

function defaultOnError(error: unknown, event: Event, context: DeliveryContext): void {
  const kind = error instanceof Error ? error.name : typeof error
  const where = `${event.id} (${event.type}) of ${context.deliveryId}`
  process.stderr.write(`webhook receiver: handler failed (${kind}) on ${where}\n`)
}

/** Store trouble is the receiver's, not the sender's: 503 so the delivery comes again. */
class StoreUnavailable extends Error {}

/**
 * A webhook receiver: verifies (signature with any of the secrets, timestamp), parses the
 * envelope, skips a delivery already handled (`webhook-id`) and, inside a delivery, every event
 * already handled (event id), then calls `onEvent` for the rest in order, marking each event
 * after its handler returns. Answers 200 when every event is handled, 500 when a handler throws
 * (the sender retries; the next attempt resumes after the last handled event), 429/503 with
 * Retry-After to push back, 400/401 for a request that does not verify (handler not called).
 * @example
 * const receiver = createReceiver({ secrets: [process.env.WEBHOOK_SECRET!], onEvent: (e) => console.log(e.type) })
 * createServer(toNodeListener(receiver)).listen(8080)
 */
export function createReceiver(options: ReceiverOptions): WebhookReceiver {
  const store = options.store ?? new MemoryStore()
  const ttl = options.dedupeTtlSeconds ?? DAY
  const onError = options.onError ?? defaultOnError
  // Fail at start-up, not on the first delivery, for secrets given as values.
  const fixedKeys = typeof options.secrets === 'function' ? null : signers(options.secrets)
  const keys = async () => fixedKeys ?? signers(await (options.secrets as () => Secrets | Promise<Secrets>)())
  // Deliveries being handled in this process: a retry that overtakes a slow first attempt waits.
  const inFlight = new Set<string>()

  const stored = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call()
    } catch {
      throw new StoreUnavailable()
    }
  }

  async function handle(events: Event[], deliveryId: string, timestamp: number): Promise<ReceiverAnswer> {
    if (await stored(() => store.has(`delivery:${deliveryId}`))) {
      return json(200, { handled: 0, skipped: events.length, duplicate: true })
    }
    const busyFor = await options.busy?.()
    if (typeof busyFor === 'number') return pushBack(busyFor, 503, 'receiver_busy', 'the receiver is busy; retry later')
    let handled = 0
    let skipped = 0
    for (const [index, event] of events.entries()) {
      if (await stored(() => store.has(`event:${event.id}`))) {
        skipped++
        continue
      }
      const context: DeliveryContext = { deliveryId, timestamp, index, total: events.length }
      try {
        await options.onEvent(event, context)
      } catch (error) {
        if (error instanceof RetryLater) {
          return pushBack(error.seconds, error.status, 'receiver_busy', `retry later (at ${event.id})`)
        }
        onError(error, event, context)
        return problem(500, 'handler_failed', `handling ${event.id} failed; the delivery will be retried from there`)
      }
      // Set only after success: a crash before this line means the event is handled again.
      await stored(() => store.mark(`event:${event.id}`, ttl))
      handled++
    }
    await stored(() => store.mark(`delivery:${deliveryId}`, ttl))
    return json(200, { handled, skipped, duplicate: false })
  }

  return {
    async receive({ body, headers }) {
      let deliveryId: string
      let timestamp: number
      let events: Event[]
      try {
        const verifyOptions = { toleranceSeconds: options.toleranceSeconds, now: options.now }
        ;({ deliveryId, timestamp } = verify(body, headers, await keys(), verifyOptions))
        events = parse(body).events
      } catch (error) {
        if (error instanceof WebhookVerificationError || error instanceof WebhookParseError) {
          return problem(error.status, error.code, error.message)
        }
        if (error instanceof ReceiverConfigError) return problem(500, 'receiver_misconfigured', error.message)
        throw error
      }
      if (inFlight.has(deliveryId)) return pushBack(5, 503, 'delivery_in_progress', 'this delivery is being handled')
      inFlight.add(deliveryId)
      try {
        return await handle(events, deliveryId, timestamp)
      } catch (error) {
        if (!(error instanceof StoreUnavailable)) throw error
        return pushBack(10, 503, 'store_unavailable', 'the dedupe store is unavailable')
      } finally {
        inFlight.delete(deliveryId)
      }
    },
  }
}
