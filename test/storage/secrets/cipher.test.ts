import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  envelopeKeyId,
  isEnvelope,
  keyIdOf,
  open,
  parseSecretKey,
  seal,
  SecretDecryptError,
} from '../../../storage/secrets/cipher'
import { SecretBox, secretBoxFromEnv } from '../../../storage/secrets/secret-box'

const newKey = () => parseSecretKey(randomBytes(32).toString('base64'), 'SECRETS_KEY')
const CONTEXT = JSON.stringify(['firewall', 'ns', 'fw', 'npmjs', 'credentials', 'password'])

/** Replaces the character at `index` of a base64url part by another valid one. */
function flip(envelope: string, part: number, index = 0): string {
  const parts = envelope.split(':')
  const text = parts[part]
  parts[part] = text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1)
  return parts.join(':')
}

describe('cipher', () => {
  it('round-trips any text, with a fresh nonce each time', () => {
    const key = newKey()
    for (const text of ['hunter2', '', 'ünïcødé ✓', 'x'.repeat(10_000), 'enc:v1:looks-like-one']) {
      const sealed = seal(key, text, CONTEXT)
      expect(isEnvelope(sealed)).toBe(true)
      expect(sealed).not.toContain(text || '\u0000')
      expect(open([key], sealed, CONTEXT)).toBe(text)
    }
    expect(seal(key, 'same', CONTEXT)).not.toBe(seal(key, 'same', CONTEXT))
  })

  it('names the key that sealed a value, by a short id that is not the key', () => {
    const key = newKey()
    const sealed = seal(key, 'hunter2', CONTEXT)
    expect(envelopeKeyId(sealed)).toBe(key.id)
    expect(key.id).toMatch(/^[A-Za-z0-9_-]{8}$/)
    expect(keyIdOf(key.key)).toBe(key.id)
    expect(key.key.toString('base64')).not.toContain(key.id)
    expect(envelopeKeyId('hunter2')).toBeNull()
  })

  it('refuses a value sealed with another key', () => {
    const sealed = seal(newKey(), 'hunter2', CONTEXT)
    expect(() => open([newKey()], sealed, CONTEXT)).toThrow(SecretDecryptError)
    expect(() => open([newKey()], sealed, CONTEXT)).toThrow(/no configured key/)
  })

  it('refuses a tampered nonce, tag, ciphertext or key id', () => {
    const key = newKey()
    const other = newKey()
    const sealed = seal(key, 'hunter2-and-more', CONTEXT)
    for (const part of [3, 4, 5])
      expect(() => open([key], flip(sealed, part, 2), CONTEXT), `part ${part}`).toThrow(SecretDecryptError)
    // The same key under another id: the header is authenticated too.
    const relabelled = sealed.replace(key.id, other.id)
    expect(() => open([key, { id: other.id, key: key.key }], relabelled, CONTEXT)).toThrow(/failed authentication/)
  })

  it('binds a value to its context: it cannot move to another field or record', () => {
    const key = newKey()
    const sealed = seal(key, 'hunter2', CONTEXT)
    const elsewhere = [
      JSON.stringify(['firewall', 'ns', 'fw', 'npmjs', 'credentials', 'username']),
      JSON.stringify(['firewall', 'ns', 'other-fw', 'npmjs', 'credentials', 'password']),
      JSON.stringify(['firewall', 'other-ns', 'fw', 'npmjs', 'credentials', 'password']),
      JSON.stringify(['webhook', 'ns', 'fw', 'secret']),
    ]
    for (const context of elsewhere) expect(() => open([key], sealed, context)).toThrow(/moved from another record/)
  })

  it('opens with the previous key during a rotation', () => {
    const previous = newKey()
    const current = newKey()
    const old = seal(previous, 'hunter2', CONTEXT)
    expect(open([current, previous], old, CONTEXT)).toBe('hunter2')
  })

  it('reads keys as base64 of exactly 32 bytes, and says so without echoing the value', () => {
    const bytes = randomBytes(32)
    expect(parseSecretKey(bytes.toString('base64'), 'SECRETS_KEY').key.equals(bytes)).toBe(true)
    expect(parseSecretKey(` ${bytes.toString('base64url')}\n`, 'SECRETS_KEY').key.equals(bytes)).toBe(true)
    const short = randomBytes(16).toString('base64')
    for (const [text, why] of [
      [short, /16 bytes/],
      [randomBytes(33).toString('base64'), /33 bytes/],
      ['not base64 at all!', /not base64/],
    ] as const) {
      let message = ''
      try {
        parseSecretKey(text, 'SECRETS_KEY_PREVIOUS')
      } catch (error) {
        message = (error as Error).message
      }
      expect(message).toMatch(/SECRETS_KEY_PREVIOUS must be 32 bytes in base64/)
      expect(message).toMatch(why)
      expect(message).not.toContain(text.trim())
    }
  })
})

describe('SecretBox', () => {
  it('without a key stores values as given, escaping only text that could pass for an envelope', () => {
    const box = new SecretBox()
    expect(box.enabled).toBe(false)
    expect(box.seal('hunter2', CONTEXT)).toBe('hunter2')
    const lookalike = seal(newKey(), 'x', CONTEXT)
    for (const text of [lookalike, 'enc:plain:x', 'enc:']) {
      expect(box.seal(text, CONTEXT)).not.toBe(text)
      expect(box.open(box.seal(text, CONTEXT), CONTEXT)).toBe(text)
    }
    expect(box.needsReseal('hunter2')).toBe(false)
  })

  it('with a key seals every write, and still reads plaintext stored before the key was set', () => {
    const box = new SecretBox(newKey())
    const sealed = box.seal('hunter2', CONTEXT)
    expect(isEnvelope(sealed)).toBe(true)
    expect(box.open(sealed, CONTEXT)).toBe('hunter2')
    expect(box.open('hunter2', CONTEXT)).toBe('hunter2')
    expect(box.open(new SecretBox().seal('enc:v1:typed-by-a-user', CONTEXT), CONTEXT)).toBe('enc:v1:typed-by-a-user')
  })

  it('lists for re-sealing exactly what the current key did not seal', () => {
    const previous = newKey()
    const box = new SecretBox(newKey(), previous)
    expect(box.needsReseal('plaintext')).toBe(true)
    expect(box.needsReseal(seal(previous, 'x', CONTEXT))).toBe(true)
    expect(box.needsReseal(box.seal('x', CONTEXT))).toBe(false)
    expect(box.knows(previous.id)).toBe(true)
    expect(box.knows(newKey().id)).toBe(false)
  })

  it('is configured from SECRETS_KEY and SECRETS_KEY_PREVIOUS, refusing malformed or lone previous keys', () => {
    const a = randomBytes(32).toString('base64')
    const b = randomBytes(32).toString('base64')
    expect(secretBoxFromEnv({}).enabled).toBe(false)
    const box = secretBoxFromEnv({ SECRETS_KEY: a, SECRETS_KEY_PREVIOUS: b })
    expect(box.keys.map((k) => k.id)).toEqual([parseSecretKey(a, 'x').id, parseSecretKey(b, 'x').id])
    expect(() => secretBoxFromEnv({ SECRETS_KEY: 'c2hvcnQ=' })).toThrow(/^SECRETS_KEY must be 32 bytes/)
    expect(() => secretBoxFromEnv({ SECRETS_KEY: a, SECRETS_KEY_PREVIOUS: 'short' })).toThrow(
      /^SECRETS_KEY_PREVIOUS must be 32 bytes/,
    )
    expect(() => secretBoxFromEnv({ SECRETS_KEY_PREVIOUS: b })).toThrow(
      /SECRETS_KEY_PREVIOUS is set but SECRETS_KEY is not/,
    )
  })
})
