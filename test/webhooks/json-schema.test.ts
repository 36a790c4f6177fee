import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { describe, expect, it } from 'vitest'
import { EVENT_DATA_SCHEMAS } from '../../server/events/schemas'
import { buildWebhookEventsSchema } from '../../server/events/json-schema'

const schema = buildWebhookEventsSchema('http://localhost:3000')
const ajv = new Ajv2020({ allErrors: true, strict: true })
addFormats(ajv)
const validate = ajv.compile(schema)

const actor = { userId: 'owner', requestId: 'req-1' }
const firewallData = {
  firewall: 'main',
  firewallVersion: 3,
  executionPhase: 'download',
  blocked: true,
  ecosystem: 'npm',
  packageName: 'left-pad',
  version: '1.3.0',
  upstream: 'npmjs',
  rule: 'no-malware',
  user: 'u1',
  request: 'req-9',
  message: 'blocked',
}
const DATA: Record<string, Record<string, unknown>> = {
  firewall: firewallData,
  'config.firewall': { firewall: 'main', version: 2, ecosystem: 'npm', actor, config: { id: 'main' } },
  'config.webhook': {
    webhook: 'wh-1',
    actor,
    config: {
      id: 'wh-1',
      name: 'n',
      url: 'https://x.example/',
      enabled: true,
      eventTypes: ['config.*'],
      firewalls: [],
    },
  },
  package: { firewall: 'main', ecosystem: 'maven', packageName: 'g:a', version: '1', actor, file: 'a-1.jar' },
  'exception-request': { firewall: 'main', ecosystem: 'npm', actor, request: { id: 'exr-1', status: 'pending' } },
  'webhook.rate_limited': { webhook: 'wh-1', reason: 'buffer_overflow', droppedEvents: 3, bufferedEvents: 5000 },
  'webhook.test': { webhook: 'wh-1', message: 'Test event' },
  'firewall.exposure': {
    id: 'exp-0123456789abcdef0123456789abcdef',
    firewall: 'main',
    ecosystem: 'npm',
    packageName: 'left-pad',
    version: '1.3.0',
    advisory: { id: 'MAL-2026-1', aliases: [], kind: 'malware' },
    firstServedAt: '2026-01-01T00:00:00.000Z',
    lastServedAt: '2026-01-02T00:00:00.000Z',
    servedTo: ['alice'],
    detectedAt: '2026-01-03T00:00:00.000Z',
    status: 'open',
  },
}
const dataFor = (type: string) => DATA[type] ?? DATA[type.split('.').slice(0, 2).join('.')] ?? DATA[type.split('.')[0]]
const event = (type: string, data: unknown) => ({
  id: 'evt-1',
  type,
  time: '2026-01-01T00:00:00.000Z',
  namespace: 'acme',
  data,
})
const body = (...events: unknown[]) => ({ version: 1, events })

describe('webhook events JSON Schema', () => {
  it('is a draft 2020-12 document that strict ajv compiles', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(schema.$id).toBe('http://localhost:3000/schemas/webhook-events-v1.json')
  })

  it.each(Object.keys(EVENT_DATA_SCHEMAS))('accepts a valid %s event', (type) => {
    expect(validate(body(event(type, dataFor(type)))), JSON.stringify(validate.errors)).toBe(true)
  })

  it('accepts any audit.<action> with audit data, extra fields included', () => {
    const data = {
      action: 'firewall.rule.upsert',
      outcome: 'failure',
      statusCode: 403,
      errorMessage: 'no',
      eventData: { permission: 'fw:update:rule' },
      later: 1,
    }
    expect(validate(body(event('audit.firewall.rule.upsert', data)))).toBe(true)
  })

  it.each([
    ['a firewall event without blocked', body(event('firewall.blocked', { ...firewallData, blocked: undefined }))],
    ['a wrong data shape for the type', body(event('webhook.test', DATA['webhook.rate_limited']))],
    ['an unknown event type', body(event('firewall.exploded', firewallData))],
    [
      'an exposure of an unknown kind',
      body(
        event('firewall.exposure', {
          ...DATA['firewall.exposure'],
          advisory: { id: 'MAL-2026-1', aliases: [], kind: 'rumour' },
        }),
      ),
    ],
    ['an unknown reason', body(event('webhook.rate_limited', { ...DATA['webhook.rate_limited'], reason: 'tired' }))],
    ['envelope version 2', { version: 2, events: [event('webhook.test', DATA['webhook.test'])] }],
    ['more than 100 events', body(...Array(101).fill(event('webhook.test', DATA['webhook.test'])))],
    ['an event id without the evt- prefix', body({ ...event('webhook.test', DATA['webhook.test']), id: '1' })],
    [
      'a config.webhook event carrying a secret',
      body(
        event('config.webhook.updated', {
          ...DATA['config.webhook'],
          config: { ...(DATA['config.webhook'].config as object), secret: 'whsec_x' },
        }),
      ),
    ],
  ])('rejects %s', (_name, value) => {
    expect(validate(JSON.parse(JSON.stringify(value)))).toBe(false)
  })
})
