import { z } from 'zod'
import {
  AuditData,
  ConfigFirewallData,
  ConfigWebhookData,
  EVENT_DATA_SCHEMAS,
  ExceptionRequestData,
  ExposureData,
  FirewallDecisionData,
  PackageData,
  WebhookRateLimitedData,
  WebhookTestData,
  type FixedEventType,
} from './schemas'
import { EVENT_TYPE_DESCRIPTIONS } from './descriptions'

type JsonSchema = Record<string, unknown>

/** Path of the published document. */
export const WEBHOOK_EVENTS_SCHEMA_PATH = '/schemas/webhook-events-v1.json'

/** Names of the `$defs` entries, one per data schema (several event types share one). */
const DATA_DEFS = new Map<z.ZodType, string>([
  [FirewallDecisionData, 'FirewallDecisionData'],
  [AuditData, 'AuditData'],
  [ConfigFirewallData, 'ConfigFirewallData'],
  [ConfigWebhookData, 'ConfigWebhookData'],
  [PackageData, 'PackageData'],
  [ExceptionRequestData, 'ExceptionRequestData'],
  [WebhookRateLimitedData, 'WebhookRateLimitedData'],
  [WebhookTestData, 'WebhookTestData'],
  [ExposureData, 'ExposureData'],
])

function toJson(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'output',
    unrepresentable: 'any',
    reused: 'inline',
  }) as JsonSchema
  delete json.$schema
  return json
}

/** Audit events are open-ended (one type per action): their data may carry fields added later. */
function open(schema: JsonSchema): JsonSchema {
  const { additionalProperties: _closed, ...rest } = schema
  return rest
}

const typeIs = (type: string): JsonSchema => ({ properties: { type: { const: type } }, required: ['type'] })
const dataRef = (name: string): JsonSchema => ({ properties: { data: { $ref: `#/$defs/${name}` } } })

/**
 * The JSON Schema (draft 2020-12) of a delivery body: the envelope of docs/webhooks.md and, through
 * if/then on `type`, the `data` of every event type, generated from the zod schemas the code
 * emits with. `audit.*` types match by prefix and their data is open.
 * @example buildWebhookEventsSchema('https://fw.example.com').$id
 */
export function buildWebhookEventsSchema(origin: string): JsonSchema {
  const defs: Record<string, JsonSchema> = {}
  for (const [schema, name] of DATA_DEFS) defs[name] = name === 'AuditData' ? open(toJson(schema)) : toJson(schema)
  const fixedTypes = Object.keys(EVENT_DATA_SCHEMAS)
  // Each entry carries its type's description (an annotation: it changes no validation).
  const rules: JsonSchema[] = Object.entries(EVENT_DATA_SCHEMAS).map(([type, schema]) => {
    const name = DATA_DEFS.get(schema as z.ZodType)
    // A data schema without its `$defs` name would publish a dangling reference.
    if (!name) throw new Error(`event type ${type}: its data schema has no entry in DATA_DEFS (json-schema.ts)`)
    return {
      description: EVENT_TYPE_DESCRIPTIONS[type as FixedEventType],
      if: typeIs(type),
      then: dataRef(name),
    }
  })
  rules.push({
    description: EVENT_TYPE_DESCRIPTIONS['audit.*'],
    if: { properties: { type: { type: 'string', pattern: '^audit\\.' } }, required: ['type'] },
    then: dataRef('AuditData'),
  })

  defs.Event = {
    type: 'object',
    description: 'One namespace event; `data` depends on `type`.',
    required: ['id', 'type', 'time', 'namespace', 'data'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: '^evt-', description: 'Stable across retries' },
      type: { anyOf: [{ enum: fixedTypes }, { type: 'string', pattern: '^audit\\.[A-Za-z0-9_.-]+$' }] },
      time: { type: 'string', format: 'date-time' },
      namespace: { type: 'string' },
      data: { type: 'object' },
      payloadTruncated: {
        const: true,
        description:
          'Present when the event alone exceeded the 512 KB delivery limit: `data` was cut (strings shortened, ' +
          'leading array items kept). GET /v1/{namespace}/events/{id} returns the whole event.',
      },
    },
    allOf: rules,
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${origin.replace(/\/+$/, '')}${WEBHOOK_EVENTS_SCHEMA_PATH}`,
    title: 'Webhook delivery body, envelope version 1',
    type: 'object',
    required: ['version', 'events'],
    additionalProperties: false,
    properties: {
      version: { const: 1 },
      events: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        description: 'Oldest first',
        items: { $ref: '#/$defs/Event' },
      },
    },
    $defs: defs,
  }
}
