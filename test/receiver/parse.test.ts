import { describe, expect, expectTypeOf, it } from 'vitest'
import { parse, WebhookParseError, type Event } from '../../receiver'
import { envelope, firewallEvent } from './support'

function parseError(body: unknown): WebhookParseError {
  try {
    parse(body)
  } catch (error) {
    if (error instanceof WebhookParseError) return error
    throw error
  }
  throw new Error('parsed, but should not have')
}

const audit = {
  id: 'evt-a',
  type: 'audit.webhook.test',
  time: '2026-01-01T00:00:00Z',
  namespace: 'default',
  data: { action: 'webhook.test', outcome: 'success', statusCode: 202, extra: 1 },
}

describe('parse', () => {
  it('returns the typed envelope, oldest first, narrowing data on type', () => {
    const first = firewallEvent('a')
    const parsed = parse(envelope([first, audit]))
    expect(parsed.version).toBe(1)
    expect(parsed.events.map((e) => e.id)).toEqual([first.id, 'evt-a'])
    const event = parsed.events[0]
    if (event.type === 'config.firewall.updated') {
      expectTypeOf(event.data.ecosystem).toEqualTypeOf<'npm' | 'pypi' | 'maven' | 'nuget'>()
      expect(event.data.firewall).toBe('a')
    } else throw new Error('narrowing failed')
    expectTypeOf<Extract<Event, { type: 'webhook.test' }>['data']['message']>().toEqualTypeOf<'Test event'>()
  })

  it('takes bytes and already-parsed objects, and passes fields it does not know through', () => {
    expect(parse(Buffer.from(envelope([audit]))).events[0].data).toMatchObject({ extra: 1 })
    expect(parse({ version: 1, events: [audit] }).events).toHaveLength(1)
  })

  it('refuses what is not a version-1 envelope, naming why and never echoing the content', () => {
    expect(parseError('{nope').code).toBe('invalid_json')
    expect(parseError('[]').code).toBe('invalid_envelope')
    expect(parseError(JSON.stringify({ version: 2, events: [audit] })).code).toBe('unsupported_version')
    expect(parseError(envelope([])).code).toBe('invalid_envelope')
    expect(parseError(envelope([{ ...audit, id: 7 }])).message).toBe('events[0].id is not a non-empty string')
    expect(parseError(envelope([audit, { ...audit, data: [] }])).message).toBe('events[1].data is not an object')
  })

  it('refuses an unknown event type and data lacking a field the schema requires for its type', () => {
    const unknown = parseError(envelope([{ ...audit, type: 'secret.<script>' }]))
    expect([unknown.code, unknown.status]).toEqual(['unknown_event_type', 400])
    expect(unknown.message).not.toContain('<script>')
    const { firewall: _gone, ...data } = firewallEvent().data
    expect(parseError(envelope([{ ...firewallEvent(), data }])).message).toBe('events[0].data lacks firewall')
    expect(parseError(envelope([{ ...audit, data: { action: 'x' } }])).message).toBe(
      'events[0].data lacks outcome, statusCode',
    )
  })
})
