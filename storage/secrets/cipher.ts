import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/**
 * Envelope encryption of one secret value with AES-256-GCM. Pure: no environment, no storage.
 *
 * A sealed value is one self-describing string, `enc:v1:<keyId>:<iv>:<tag>:<ciphertext>`
 * (base64url parts), so a reader recognises it and picks the key that wrote it. The
 * authenticated data binds the ciphertext to its header and to a caller-given context (what
 * the value protects: namespace, record, field), so a value copied into another record fails.
 */

/** A 32-byte key and its short, non-secret id (a hash prefix, written into every envelope). */
export interface SecretKey {
  id: string
  key: Buffer
}

export const ENVELOPE_PREFIX = 'enc:v1:'
/** Marks a stored plaintext that would otherwise look like one of our envelopes (no key configured). */
export const ESCAPE_PREFIX = 'enc:plain:'

const ENVELOPE = /^enc:v1:([A-Za-z0-9_-]{8}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22}):([A-Za-z0-9_-]*)$/

/** Thrown when a value cannot be opened; never carries key material or the value. */
export class SecretDecryptError extends Error {
  constructor(
    message: string,
    readonly keyId: string | null = null,
  ) {
    super(message)
    this.name = 'SecretDecryptError'
  }
}

/**
 * Reads a key given as base64 (standard or url-safe); throws a message naming `name` when it
 * is not exactly 32 bytes. The key itself is never part of the message.
 * @example parseSecretKey(randomBytes(32).toString('base64'), 'SECRETS_KEY').id // 'q3Zr9Q1x'
 */
export function parseSecretKey(text: string, name: string): SecretKey {
  const trimmed = text.trim()
  const valid = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
  const key = valid ? Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64') : Buffer.alloc(0)
  if (key.length !== 32) {
    throw new Error(
      `${name} must be 32 bytes in base64 (e.g. the output of \`openssl rand -base64 32\`); got ${valid ? `${key.length} bytes` : 'text that is not base64'}`,
    )
  }
  return { id: keyIdOf(key), key }
}

/** A short id for a key: 8 base64url characters of a labelled SHA-256 (reveals nothing usable). */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('package-firewall secrets key id\0').update(key).digest('base64url').slice(0, 8)
}

export function isEnvelope(value: string): boolean {
  return ENVELOPE.test(value)
}

/** The id of the key that sealed `value`, or null when it is not an envelope. */
export function envelopeKeyId(value: string): string | null {
  return ENVELOPE.exec(value)?.[1] ?? null
}

function additionalData(keyId: string, context: string): Buffer {
  return Buffer.from(`${ENVELOPE_PREFIX}${keyId}\0${context}`, 'utf8')
}

/**
 * Seals `plaintext` with `key`; `context` is authenticated, not stored.
 * @example seal(key, 'hunter2', '["firewall","ns","fw","up","password"]') // 'enc:v1:q3Zr9Q1x:...'
 */
export function seal(key: SecretKey, plaintext: string, context: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key.key, iv)
  cipher.setAAD(additionalData(key.id, context))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  const tag = cipher.getAuthTag()
  return `${ENVELOPE_PREFIX}${key.id}:${iv.toString('base64url')}:${tag.toString('base64url')}:${ciphertext.toString('base64url')}`
}

/**
 * Opens an envelope with whichever of `keys` wrote it. Throws SecretDecryptError when no key
 * has its id, or when the value, its header or its context was altered.
 */
export function open(keys: readonly SecretKey[], envelope: string, context: string): string {
  const parts = ENVELOPE.exec(envelope)
  if (!parts) throw new SecretDecryptError('not an encrypted value')
  const [, keyId, iv, tag, ciphertext] = parts
  const key = keys.find((candidate) => candidate.id === keyId)
  if (!key) throw new SecretDecryptError(`value was encrypted with key id ${keyId}, which no configured key has`, keyId)
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(additionalData(keyId, context))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
  } catch {
    throw new SecretDecryptError(
      `value encrypted with key id ${keyId} failed authentication (altered, or moved from another record)`,
      keyId,
    )
  }
}
