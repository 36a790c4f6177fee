import { describe, expect, it } from 'vitest'
import { scrubFields } from '../../server/app/log-scrub'

describe('log scrubber (the safety net under the logger)', () => {
  it('replaces fields named like credentials, at any depth', () => {
    expect(
      scrubFields({
        webhook: 'wh-1',
        token: 'x',
        nested: { Authorization: 'y', credentials: { password: 'z' } },
        list: [{ secret: 's' }],
      }),
    ).toEqual({
      webhook: 'wh-1',
      token: '[REDACTED]',
      nested: { Authorization: '[REDACTED]', credentials: '[REDACTED]' },
      list: [{ secret: '[REDACTED]' }],
    })
  })

  it('masks token material, webhook secrets, bearer/basic credentials and URL user info inside text', () => {
    const scrubbed = scrubFields({
      error:
        'fetch https://user:hunter2@registry.example/pkg failed with Bearer abc123def456ghi; token fwp_AbCdEf0123456789xyz; whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      note: 'Basic authentication required',
    }) as Record<string, string>
    expect(scrubbed.error).toBe(
      'fetch https://[REDACTED]@registry.example/pkg failed with Bearer [REDACTED]; token fwp_[REDACTED]; whsec_[REDACTED]',
    )
    expect(scrubbed.note).toBe('Basic authentication required')
  })

  it('leaves ordinary fields alone', () => {
    const fields = {
      requestId: 'req-1',
      route: '/v1/{ns}/config/{fw}',
      status: 200,
      durationMs: 1.5,
      tokenIdentifier: 'tid-abc',
    }
    expect(scrubFields(fields)).toEqual(fields)
  })
})
