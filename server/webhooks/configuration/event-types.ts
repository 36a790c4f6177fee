import { EVENT_DATA_SCHEMAS, type FixedEventType, type NamespaceEvent } from '../../events/schemas'

/** A validation problem in the API's `errors` shape. */
interface FieldError {
  path: string
  message: string
}

/** Exact types listed in docs/webhooks.md (system `webhook.*` types excluded: they cannot be subscribed). */
const KNOWN_TYPES = new Set(Object.keys(EVENT_DATA_SCHEMAS).filter((type) => !type.startsWith('webhook.')))
/** The first segment of an event type: `config` of `config.firewall.created`. */
type FamilyOf<T> = T extends `${infer Family}.${string}` ? Family : never
/** Families a subscription may name: every family of `EVENT_DATA_SCHEMAS` but the system `webhook.*`, and the open ones. */
type SubscribableFamily = Exclude<FamilyOf<FixedEventType>, 'webhook'> | 'audit' | 'vulnerability'

/**
 * How each family is subscribed to: `open` to any name (rule 3), `scoped` by the webhook's firewall
 * scope ("Firewall scope"). The family of a new event type does not build until it is here.
 */
const FAMILY_RULES = {
  firewall: { open: false, scoped: true },
  audit: { open: true, scoped: false },
  config: { open: false, scoped: false },
  package: { open: false, scoped: true },
  'exception-request': { open: false, scoped: true },
  vulnerability: { open: true, scoped: false },
} as const satisfies Record<SubscribableFamily, { open: boolean; scoped: boolean }>

const familyNames = Object.keys(FAMILY_RULES) as SubscribableFamily[]
/** First segments a subscription may start with. */
const FAMILIES = new Set<string>(familyNames)
/** Families open to any name (rule 3). */
const OPEN_FAMILIES = familyNames.filter((family) => FAMILY_RULES[family].open).map((family) => `${family}.`)
/** Events limited by the webhook's firewall scope ("Firewall scope"). */
const SCOPED_FAMILIES = familyNames.filter((family) => FAMILY_RULES[family].scoped).map((family) => `${family}.`)

const SEGMENT = /^[a-z0-9][a-z0-9_-]*$/

/**
 * Checks a webhook's `eventTypes` against docs/webhooks.md rules 1-4; returns one error per bad entry
 * with a path like `eventTypes[2]`; an empty array is refused as a whole, naming the families.
 * @example validateEventTypes(['firewall.*', '*']) // [{ path: 'eventTypes[1]', message: ... }]
 */
export function validateEventTypes(eventTypes: unknown): FieldError[] {
  if (!Array.isArray(eventTypes)) return [{ path: 'eventTypes', message: 'must be an array of strings' }]
  // An empty list would silently match nothing: say what can be subscribed to instead.
  if (eventTypes.length === 0) {
    const families = [...FAMILIES].map((family) => `${family}.*`).join(', ')
    return [
      {
        path: 'eventTypes',
        message: `subscribe to at least one event type: an exact type or a family prefix (${families})`,
      },
    ]
  }
  const errors: FieldError[] = []
  eventTypes.forEach((entry, index) => {
    const message = entryProblem(entry)
    if (message) errors.push({ path: `eventTypes[${index}]`, message })
  })
  return errors
}

function entryProblem(entry: unknown): string | null {
  if (typeof entry !== 'string' || entry.length === 0) return 'must be a non-empty string'
  if (entry === '*') return 'a bare "*" is not allowed; subscribe to a prefix such as "firewall.*"'
  if (entry === 'webhook.*' || entry.startsWith('webhook.')) {
    return 'webhook.* system events are always delivered and cannot be subscribed to'
  }
  const isPrefix = entry.endsWith('.*')
  const name = isPrefix ? entry.slice(0, -2) : entry
  // Rule 1: dot-separated lower-case segments, a wildcard only as a whole last segment.
  if (!name.split('.').every((segment) => SEGMENT.test(segment))) {
    return 'must be an exact event type or a prefix ending in ".*"'
  }
  if (!FAMILIES.has(name.split('.')[0])) return `unknown event family in "${entry}"`
  if (isPrefix) return null
  if (OPEN_FAMILIES.some((family) => entry.startsWith(family))) return null
  // Rule 3: exact firewall., config., package. and exception-request. names must be in the table.
  return KNOWN_TYPES.has(entry) ? null : `unknown event type "${entry}"`
}

/** The subscription fields matching needs. */
interface WebhookSubscription {
  eventTypes: string[]
  /** Firewall ids; empty = all firewalls. */
  firewalls: string[]
  enabled: boolean
}

/** True when `type` is named by `pattern` (exact, or `prefix.*` covering deeper names). */
function typeMatches(pattern: string, type: string): boolean {
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1))
  return pattern === type
}

/**
 * Whether an event goes to a webhook: disabled webhooks get nothing; system `webhook.*` events
 * always match; others need a matching `eventTypes` entry, and firewall/package/exception-request
 * events must also come from a firewall in scope (`event.data.firewall`).
 */
export function matchesWebhook(event: Pick<NamespaceEvent, 'type' | 'data'>, webhook: WebhookSubscription): boolean {
  return webhook.enabled && matchesSubscription(event, webhook)
}

/**
 * `matchesWebhook` as if the webhook were enabled (the delivery feed judges that by the event's
 * time): run for every webhook on every event read, so it copies nothing.
 */
export function matchesSubscription(
  event: Pick<NamespaceEvent, 'type' | 'data'>,
  webhook: Omit<WebhookSubscription, 'enabled'>,
): boolean {
  if (event.type.startsWith('webhook.')) return true
  if (!webhook.eventTypes.some((pattern) => typeMatches(pattern, event.type))) return false
  if (webhook.firewalls.length === 0) return true
  if (!SCOPED_FAMILIES.some((family) => event.type.startsWith(family))) return true
  const firewall = (event.data as { firewall?: unknown }).firewall
  return typeof firewall === 'string' && webhook.firewalls.includes(firewall)
}
