import { WebhookParseError } from './errors'
import {
  EVENT_TYPE_PATTERNS,
  FIXED_EVENT_TYPES,
  REQUIRED_DATA_FIELDS,
  REQUIRED_PATTERN_DATA_FIELDS,
  type Envelope,
  type Event,
} from './events.generated'
import type { RawBody } from './verify'

const fixedTypes = new Set(FIXED_EVENT_TYPES)
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const own = (record: Record<string, unknown>, field: string) => Object.prototype.hasOwnProperty.call(record, field)

function requiredFields(type: string): readonly string[] | null {
  if (fixedTypes.has(type)) return REQUIRED_DATA_FIELDS[type]
  if (!EVENT_TYPE_PATTERNS.some((pattern) => pattern.test(type))) return null
  return REQUIRED_PATTERN_DATA_FIELDS.find(([pattern]) => pattern.test(type))?.[1] ?? []
}

function checkEvent(value: unknown, index: number): Event {
  const where = `events[${index}]`
  if (!isRecord(value)) throw new WebhookParseError('invalid_event', `${where} is not an object`)
  for (const field of ['id', 'type', 'time', 'namespace']) {
    if (typeof value[field] !== 'string' || value[field] === '') {
      throw new WebhookParseError('invalid_event', `${where}.${field} is not a non-empty string`)
    }
  }
  if (!isRecord(value.data)) throw new WebhookParseError('invalid_event', `${where}.data is not an object`)
  const required = requiredFields(value.type as string)
  // Type names come from the schema; the text is the sender's, so it is not echoed.
  if (!required) {
    throw new WebhookParseError('unknown_event_type', `${where}.type is not an event type of envelope version 1`)
  }
  const data = value.data
  const missing = required.filter((field) => !own(data, field))
  if (missing.length) throw new WebhookParseError('invalid_event', `${where}.data lacks ${missing.join(', ')}`)
  return value as unknown as Event
}

/**
 * Parses a verified delivery body into the typed envelope `{ version: 1, events }` (oldest
 * first). Checks the envelope, each event's fields, its type (one of the schema's) and the
 * `data` fields the schema requires for that type; other fields are passed through as sent.
 * Call it only after `verify`: the signature is what makes the content trustworthy.
 * @example
 * for (const event of parse(rawBody).events) if (event.type === 'firewall.blocked') alert(event.data.packageName)
 * @throws WebhookParseError (400)
 */
export function parse(body: RawBody | Envelope | unknown): Envelope {
  let value: unknown = body
  if (typeof body === 'string' || body instanceof Uint8Array) {
    try {
      value = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'))
    } catch {
      throw new WebhookParseError('invalid_json', 'the body is not JSON')
    }
  }
  if (!isRecord(value)) throw new WebhookParseError('invalid_envelope', 'the body is not a JSON object')
  if (value.version !== 1) throw new WebhookParseError('unsupported_version', 'only envelope version 1 is understood')
  if (!Array.isArray(value.events) || value.events.length === 0) {
    throw new WebhookParseError('invalid_envelope', 'events is not a non-empty array')
  }
  return { version: 1, events: value.events.map(checkEvent) }
}
