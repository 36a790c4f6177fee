import { describe, expect, it } from 'vitest'
import { matchesWebhook, validateEventTypes } from '../../server/webhooks/configuration/event-types'

describe('validateEventTypes', () => {
  it('accepts exact known types, prefixes and open audit/vulnerability names', () => {
    expect(
      validateEventTypes([
        'firewall.blocked',
        'firewall.*',
        'audit.*',
        'audit.team.*',
        'audit.firewall.rule.upsert',
        'config.*',
        'config.webhook.updated',
        'package.*',
        'exception-request.*',
        'exception-request.withdrawn',
        'vulnerability.found',
        'vulnerability.*',
      ]),
    ).toEqual([])
  })

  it('reports each bad entry at its index', () => {
    const errors = validateEventTypes([
      'firewall.*',
      '*',
      'firewall.denied',
      'webhook.*',
      'webhook.test',
      'config.firewall.moved',
    ])
    expect(errors.map((error) => error.path)).toEqual([
      'eventTypes[1]',
      'eventTypes[2]',
      'eventTypes[3]',
      'eventTypes[4]',
      'eventTypes[5]',
    ])
    expect(errors[0].message).toMatch(/bare/)
    expect(errors[2].message).toMatch(/always delivered/)
  })

  it.each([
    'package.deleted',
    'exception-request.reopened',
    'firewall.*.blocked',
    'firewall.',
    'Firewall.blocked',
    'other.*',
    'audit',
    '',
  ])('rejects %j', (entry) => {
    expect(validateEventTypes([entry])).toHaveLength(1)
  })

  it('rejects a non-array and non-string entries', () => {
    expect(validateEventTypes('firewall.*')).toEqual([{ path: 'eventTypes', message: expect.any(String) }])
    expect(validateEventTypes([])).toEqual([
      { path: 'eventTypes', message: expect.stringContaining('exception-request.*') },
    ])
    expect(validateEventTypes([42])[0].path).toBe('eventTypes[0]')
  })
})

describe('matchesWebhook', () => {
  const hook = (eventTypes: string[], firewalls: string[] = [], enabled = true) => ({ eventTypes, firewalls, enabled })
  const blocked = { type: 'firewall.blocked' as const, data: { firewall: 'fw-a' } }

  it('matches exact types and prefixes', () => {
    expect(matchesWebhook(blocked, hook(['firewall.blocked']))).toBe(true)
    expect(matchesWebhook(blocked, hook(['firewall.*']))).toBe(true)
    expect(matchesWebhook(blocked, hook(['firewall.allowed', 'package.*']))).toBe(false)
    expect(matchesWebhook({ type: 'audit.team.create', data: {} }, hook(['audit.team.*']))).toBe(true)
    expect(matchesWebhook({ type: 'audit.teams', data: {} }, hook(['audit.team.*']))).toBe(false)
  })

  it('limits firewall, package and exception-request events to the firewall scope', () => {
    expect(matchesWebhook(blocked, hook(['firewall.*'], ['fw-a']))).toBe(true)
    expect(matchesWebhook(blocked, hook(['firewall.*'], ['fw-b']))).toBe(false)
    expect(
      matchesWebhook({ type: 'package.published', data: { firewall: 'fw-b' } }, hook(['package.*'], ['fw-a'])),
    ).toBe(false)
    expect(
      matchesWebhook(
        { type: 'exception-request.created', data: { firewall: 'fw-a' } },
        hook(['exception-request.*'], ['fw-a']),
      ),
    ).toBe(true)
  })

  it('never scopes audit and config events', () => {
    expect(
      matchesWebhook({ type: 'config.firewall.updated', data: { firewall: 'fw-b' } }, hook(['config.*'], ['fw-a'])),
    ).toBe(true)
    expect(matchesWebhook({ type: 'audit.rule.upsert', data: {} }, hook(['audit.*'], ['fw-a']))).toBe(true)
  })

  it('always delivers system events to enabled webhooks', () => {
    expect(matchesWebhook({ type: 'webhook.test', data: {} }, hook(['firewall.blocked'], ['fw-a']))).toBe(true)
    expect(matchesWebhook({ type: 'webhook.rate_limited', data: {} }, hook([]))).toBe(true)
  })

  it('delivers nothing to a disabled webhook', () => {
    expect(matchesWebhook(blocked, hook(['firewall.*'], [], false))).toBe(false)
  })
})
