import {
  ENVELOPE_PREFIX,
  ESCAPE_PREFIX,
  envelopeKeyId,
  isEnvelope,
  open,
  parseSecretKey,
  seal,
  type SecretKey,
} from './cipher'

/**
 * The keys of this process (`SECRETS_KEY`, and `SECRETS_KEY_PREVIOUS` during a rotation) and
 * the one policy for stored secret values: with a key every write is sealed with the current
 * key; without one values are stored as given. Reads accept plaintext written before a key
 * was set, and envelopes of either key.
 */
export class SecretBox {
  /** Every key that may open a value, current first. */
  readonly keys: readonly SecretKey[]

  constructor(
    readonly current: SecretKey | null = null,
    readonly previous: SecretKey | null = null,
  ) {
    if (previous && !current)
      throw new Error('SECRETS_KEY_PREVIOUS is set but SECRETS_KEY is not: set both during a rotation')
    this.keys = [current, previous].filter((key): key is SecretKey => key !== null && key !== undefined)
  }

  get enabled(): boolean {
    return this.current !== null
  }

  /** True when `keyId` belongs to SECRETS_KEY or SECRETS_KEY_PREVIOUS. */
  knows(keyId: string): boolean {
    return this.keys.some((key) => key.id === keyId)
  }

  /** The stored form of `plaintext` protecting `context` (see cipher.ts). */
  seal(plaintext: string, context: string): string {
    if (this.current) return seal(this.current, plaintext, context)
    // Without a key a value is stored as is, unless a client's text could pass for one of ours.
    return plaintext.startsWith('enc:') ? ESCAPE_PREFIX + plaintext : plaintext
  }

  /** The plaintext of a stored value; throws SecretDecryptError when it cannot be opened. */
  open(stored: string, context: string): string {
    if (stored.startsWith(ESCAPE_PREFIX)) return stored.slice(ESCAPE_PREFIX.length)
    if (!stored.startsWith(ENVELOPE_PREFIX) || !isEnvelope(stored)) return stored
    return open(this.keys, stored, context)
  }

  /** True when a stored value is not yet sealed with the current key (rotation's work list). */
  needsReseal(stored: string): boolean {
    return this.current !== null && envelopeKeyId(stored) !== this.current.id
  }
}

/**
 * The box configured by `SECRETS_KEY` / `SECRETS_KEY_PREVIOUS`; throws a message naming the
 * setting when one is malformed.
 */
export function secretBoxFromEnv(env: NodeJS.ProcessEnv): SecretBox {
  const current = env.SECRETS_KEY ? parseSecretKey(env.SECRETS_KEY, 'SECRETS_KEY') : null
  const previous = env.SECRETS_KEY_PREVIOUS ? parseSecretKey(env.SECRETS_KEY_PREVIOUS, 'SECRETS_KEY_PREVIOUS') : null
  return new SecretBox(current, previous?.id === current?.id ? null : previous)
}
