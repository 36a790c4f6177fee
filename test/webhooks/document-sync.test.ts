import { describe, expect, it } from 'vitest'
import { documentChanges } from '../../server/webhooks/delivery/document-sync'
import type { DeliveryContext } from '../../machines/webhook-delivery/types'
import type { WebhookRecord } from '../../server/webhooks/configuration/model'

const now = Date.parse('2026-01-02T00:00:00Z')
const context = (over: Partial<DeliveryContext>) =>
  ({ quarantinedUntil: null, disabled: false, settings: { quarantineMs: 86_400_000 }, ...over }) as DeliveryContext
const doc = (over: Partial<WebhookRecord>) => ({ enabled: true, ...over }) as WebhookRecord

describe('what a stored webhook document tells its actor', () => {
  it('releases a quarantine released at or after it began, not one released before', () => {
    const quarantined = { value: 'quarantined', context: context({ quarantinedUntil: now + 1000 }) }
    const began = '2026-01-01T12:00:00.000Z'
    expect(
      documentChanges(doc({ quarantinedAt: began, releasedAt: '2026-01-01T13:00:00.000Z' }), quarantined, now),
    ).toEqual([{ type: 'RELEASE', now }])
    expect(
      documentChanges(doc({ quarantinedAt: began, releasedAt: '2026-01-01T11:00:00.000Z' }), quarantined, now),
    ).toEqual([])
    // Older documents without quarantinedAt: the start is the end minus the quarantine length.
    expect(documentChanges(doc({ releasedAt: new Date(now).toISOString() }), quarantined, now)).toEqual([
      { type: 'RELEASE', now },
    ])
    expect(documentChanges(doc({ releasedAt: began }), { ...quarantined, value: 'idle' }, now)).toEqual([])
  })

  it('reports an enable or disable the actor has not seen, and nothing when they agree', () => {
    expect(documentChanges(doc({ enabled: false }), { value: 'idle', context: context({}) }, now)).toEqual([
      { type: 'DISABLED', now },
    ])
    expect(
      documentChanges(doc({ enabled: true }), { value: 'disabled', context: context({ disabled: true }) }, now),
    ).toEqual([{ type: 'ENABLED', now }])
    expect(documentChanges(doc({ enabled: true }), { value: 'idle', context: context({}) }, now)).toEqual([])
  })

  it("reports the webhook's own settings when they differ from the actor's, older snapshots counting as none", () => {
    const idle = (over: Partial<DeliveryContext>) => ({ value: 'idle', context: context(over) })
    expect(documentChanges(doc({ rateLimit: 0.5 }), idle({}), now)).toEqual([
      { type: 'SETTINGS_CHANGED', settings: { rateLimit: 0.5 }, now },
    ])
    expect(documentChanges(doc({}), idle({ rateLimit: 2 }), now)).toEqual([
      { type: 'SETTINGS_CHANGED', settings: { rateLimit: null }, now },
    ])
    expect(documentChanges(doc({ rateLimit: 2 }), idle({ rateLimit: 2 }), now)).toEqual([])
    expect(documentChanges(doc({}), idle({ rateLimit: null }), now)).toEqual([])
  })
})
