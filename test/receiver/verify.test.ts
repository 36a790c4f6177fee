import { describe, expect, it } from 'vitest'
import { ReceiverConfigError, verify, WebhookVerificationError } from '../../receiver'
import { envelope, firewallEvent, newSecret, signedHeaders } from './support'

const body = envelope([firewallEvent()])

function refusal(call: () => unknown): WebhookVerificationError {
  try {
    call()
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error
    throw error
  }
  throw new Error('verified, but should not have')
}

describe('verify', () => {
  it('accepts a request signed by the reference package and names the delivery and secret', () => {
    const secret = newSecret()
    const headers = signedHeaders(body, [secret], 'whdel-abc')
    expect(verify(body, headers, [secret])).toMatchObject({ deliveryId: 'whdel-abc', secretIndex: 0 })
  })

  it('accepts with any of several secrets (rotation), either side of the overlap', () => {
    const [oldSecret, newOne, other] = [newSecret(), newSecret(), newSecret()]
    const both = signedHeaders(body, [newOne, oldSecret])
    expect(verify(body, both, [oldSecret]).secretIndex).toBe(0)
    expect(verify(body, both, [newOne]).secretIndex).toBe(0)
    expect(verify(body, both, [other, oldSecret]).secretIndex).toBe(1)
    expect(verify(body, signedHeaders(body, [newOne]), [newOne, oldSecret]).secretIndex).toBe(0)
  })

  it('refuses a tampered body, a wrong secret and a signature moved to another delivery id', () => {
    const secret = newSecret()
    const headers = signedHeaders(body, [secret])
    expect(refusal(() => verify(body.replace('"fw"', '"fx"'), headers, [secret])).code).toBe('no_matching_signature')
    expect(refusal(() => verify(body, headers, [newSecret()])).code).toBe('no_matching_signature')
    expect(refusal(() => verify(body, { ...headers, 'webhook-id': 'whdel-other' }, [secret])).status).toBe(401)
  })

  it('judges the timestamp with the 5-minute default or a configured tolerance', () => {
    const secret = newSecret()
    const now = Date.now()
    const at = (secondsAgo: number) => signedHeaders(body, [secret], 'whdel-t', now - secondsAgo * 1000)
    expect(() => verify(body, at(290), [secret], { now: () => now })).not.toThrow()
    expect(refusal(() => verify(body, at(310), [secret], { now: () => now })).code).toBe('timestamp_too_old')
    expect(refusal(() => verify(body, at(-310), [secret], { now: () => now })).code).toBe('timestamp_too_new')
    expect(refusal(() => verify(body, at(61), [secret], { now: () => now, toleranceSeconds: 60 })).code).toBe(
      'timestamp_too_old',
    )
    expect(() => verify(body, at(3_000), [secret], { now: () => now, toleranceSeconds: 3_600 })).not.toThrow()
  })

  it('answers 400 for requests that are not deliveries at all', () => {
    const secret = newSecret()
    const headers = signedHeaders(body, [secret])
    const missing = refusal(() => verify(body, { 'webhook-id': headers['webhook-id'] }, [secret]))
    expect([missing.code, missing.status]).toEqual(['missing_headers', 400])
    const garbled = refusal(() => verify(body, { ...headers, 'webhook-timestamp': '12abc' }, [secret]))
    expect([garbled.code, garbled.status]).toEqual(['invalid_timestamp', 400])
  })

  it('reads fetch Headers, node header records in any case, and byte bodies', () => {
    const secret = newSecret()
    const headers = signedHeaders(body, [secret], 'whdel-h')
    expect(verify(new TextEncoder().encode(body), new Headers(headers), [secret]).deliveryId).toBe('whdel-h')
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), [v]]))
    expect(verify(Buffer.from(body), upper, secret).deliveryId).toBe('whdel-h')
  })

  it('never puts a secret or a signature in a message, and refuses unusable secrets', () => {
    const secret = newSecret()
    const headers = signedHeaders(body, [secret])
    const error = refusal(() => verify(body + ' ', headers, [secret]))
    expect(error.message).not.toContain(secret.slice(6, 20))
    expect(error.message).not.toContain(headers['webhook-signature'].slice(3, 20))
    expect(() => verify(body, headers, [])).toThrow(ReceiverConfigError)
    const bad = 'whsec_not base64!!'
    expect(() => verify(body, headers, [bad])).toThrow(/secret #1 is not a base64 key/)
    try {
      verify(body, headers, [bad])
    } catch (e) {
      expect((e as Error).message).not.toContain('not base64!!')
    }
  })
})
