import { describe, expect, it } from 'vitest'
import { parseWebhookSettings, WebhookSettingsError } from '../../server/webhooks/configuration/settings'

describe('parseWebhookSettings', () => {
  it('applies the spec defaults', () => {
    expect(parseWebhookSettings({})).toEqual({
      retryScheduleMs: [30_000, 120_000, 600_000, 1_800_000, 3_600_000],
      attemptTimeoutMs: 10_000,
      quarantineMs: 86_400_000,
      secretOverlapMs: 86_400_000,
      rate: 5,
      bufferSize: 5000,
      allowedNetworks: [],
      rejectedDomains: [],
      leaseMs: 10_000,
    })
  })

  it('reads every variable', () => {
    const settings = parseWebhookSettings({
      WEBHOOK_RETRY_SCHEDULE: '50ms, 100ms',
      WEBHOOK_ATTEMPT_TIMEOUT: '500ms',
      WEBHOOK_QUARANTINE: '2s',
      WEBHOOK_SECRET_OVERLAP: '1h',
      WEBHOOK_RATE: '20',
      WEBHOOK_BUFFER: '10',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8, ::1/128,10.1.2.3',
      WEBHOOK_REJECTED_DOMAINS: 'Example.COM,internal.test.',
      WEBHOOK_LEASE: '2s',
    })
    expect(settings).toMatchObject({
      retryScheduleMs: [50, 100],
      attemptTimeoutMs: 500,
      quarantineMs: 2000,
      secretOverlapMs: 3_600_000,
      rate: 20,
      bufferSize: 10,
      allowedNetworks: ['127.0.0.0/8', '::1/128', '10.1.2.3/32'],
      rejectedDomains: ['example.com', 'internal.test'],
      leaseMs: 2000,
    })
  })

  it('treats empty strings as unset', () => {
    expect(parseWebhookSettings({ WEBHOOK_RATE: '', WEBHOOK_ALLOWED_NETWORKS: '' }).rate).toBe(5)
  })

  it.each([
    ['WEBHOOK_RETRY_SCHEDULE', '30s,soon'],
    ['WEBHOOK_ATTEMPT_TIMEOUT', '0s'],
    ['WEBHOOK_QUARANTINE', '1 day'],
    ['WEBHOOK_RATE', '0'],
    ['WEBHOOK_RATE', '2.5'],
    ['WEBHOOK_BUFFER', '-1'],
    ['WEBHOOK_ALLOWED_NETWORKS', '10.0.0.0/33'],
    ['WEBHOOK_ALLOWED_NETWORKS', 'localhost'],
    ['WEBHOOK_REJECTED_DOMAINS', 'bad domain'],
    ['WEBHOOK_LEASE', '0s'],
    ['WEBHOOK_LEASE', 'a while'],
  ])('rejects %s=%s with a message naming the variable', (name, value) => {
    expect(() => parseWebhookSettings({ [name]: value })).toThrow(WebhookSettingsError)
    expect(() => parseWebhookSettings({ [name]: value })).toThrow(name)
  })
})
