import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import {
  constantTimeEqual,
  generateSecret,
  sign,
  signatureHeader,
  verifySignatureHeader,
} from '../../server/webhooks/protocol/signing'

const body = '{"version":1,"events":[{"id":"evt-1","type":"webhook.test"}]}'
const id = 'whdel-abc'

describe('signing', () => {
  it('generates whsec_ secrets holding 32 random bytes', () => {
    const secret = generateSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
    expect(generateSecret()).not.toBe(secret)
  })

  it('produces a signature the standardwebhooks library accepts', () => {
    const secret = generateSecret()
    const ts = Math.floor(Date.now() / 1000)
    const signature = sign(secret, id, ts, body)
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(signature).toBe(new Webhook(secret).sign(id, new Date(ts * 1000), body))
    const verified = new Webhook(secret).verify(body, {
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': signature,
    })
    expect(verified).toEqual(JSON.parse(body))
  })

  it('signs with every secret during a rotation; each verifies on its own', () => {
    const previous = generateSecret()
    const current = generateSecret()
    const ts = Math.floor(Date.now() / 1000)
    const header = signatureHeader([current, previous], id, ts, body)
    expect(header.split(' ')).toHaveLength(2)
    for (const secret of [current, previous]) {
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': header }
      expect(() => new Webhook(secret).verify(body, headers)).not.toThrow()
      expect(verifySignatureHeader(header, [secret], id, ts, body)).toBe(true)
    }
    expect(verifySignatureHeader(header, [generateSecret()], id, ts, body)).toBe(false)
  })

  it('changes when any signed part changes', () => {
    const secret = generateSecret()
    const base = sign(secret, id, 1, body)
    expect(sign(secret, 'whdel-other', 1, body)).not.toBe(base)
    expect(sign(secret, id, 2, body)).not.toBe(base)
    expect(sign(secret, id, 1, `${body} `)).not.toBe(base)
  })

  it('refuses secrets without the whsec_ prefix', () => {
    expect(() => sign('abc', id, 1, body)).toThrow(/whsec_/)
  })

  it('compares strings in constant time, any length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true)
    expect(constantTimeEqual('abc', 'abd')).toBe(false)
    expect(constantTimeEqual('abc', 'abcd')).toBe(false)
    expect(constantTimeEqual('', '')).toBe(true)
  })
})
