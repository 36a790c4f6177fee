import type { Backend } from '../backend'
import { envelopeKeyId, SecretDecryptError } from './cipher'
import type { SecretBox } from './secret-box'
import { keys } from '../repositories/keys'

/**
 * A small record that proves which key the stored secrets were written with: a sealed known
 * text plus the ids of every key that may have sealed a stored value since the last rotation.
 * Written by the first process started with SECRETS_KEY; checked by every start.
 */
export const KEY_CHECK_KEY = keys.secretsKeyCheck

const CHECK_TEXT = 'package-firewall secrets key check'
const CHECK_CONTEXT = JSON.stringify(['secrets', 'key-check'])

interface KeyCheckRecord {
  check: string
  /** Keys that may have sealed stored values; rotation narrows this to the current key. */
  keyIds: string[]
}

/** A start-up refusal: the message names the settings to fix and never carries key material. */
export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SecretsKeyError'
  }
}

const ROTATION_HINT =
  'during a rotation set the old key as SECRETS_KEY_PREVIOUS and run `npm run admin -- rotate-secrets-key`'

/** The record sealed with the current key alone (after a rotation, or on first use). */
export function freshKeyCheck(box: SecretBox): KeyCheckRecord {
  return { check: box.seal(CHECK_TEXT, CHECK_CONTEXT), keyIds: [box.current!.id] }
}

/**
 * Verifies at start that this process can open what storage holds, and records its key id.
 * Throws SecretsKeyError when SECRETS_KEY (or SECRETS_KEY_PREVIOUS) does not match, or when
 * storage holds encrypted secrets and no key is set.
 */
export async function verifySecretsKey(backend: Backend, box: SecretBox): Promise<void> {
  if (!box.enabled) {
    const existing = await backend.keyValue.get<KeyCheckRecord>(KEY_CHECK_KEY)
    if (existing) {
      throw new SecretsKeyError(
        `SECRETS_KEY is not set, but the stored secrets are encrypted (key id ${existing.keyIds.join(', ')}): start with that SECRETS_KEY`,
      )
    }
    return
  }
  await backend.keyValue.transact([KEY_CHECK_KEY], (values) => {
    const existing = values.get(KEY_CHECK_KEY) as KeyCheckRecord | null
    if (!existing) return { writes: { set: { [KEY_CHECK_KEY]: freshKeyCheck(box) } }, result: undefined }
    const writtenWith = envelopeKeyId(existing.check) ?? 'unknown'
    try {
      if (box.open(existing.check, CHECK_CONTEXT) !== CHECK_TEXT) throw new SecretDecryptError('key check text differs')
    } catch (error) {
      if (!(error instanceof SecretDecryptError)) throw error
      throw new SecretsKeyError(
        `SECRETS_KEY${box.previous ? ' / SECRETS_KEY_PREVIOUS' : ''} cannot decrypt the stored secrets (written with key id ${writtenWith}; ` +
          `configured: ${box.keys.map((key) => key.id).join(', ')}). Start with the key they were written with, or ${ROTATION_HINT}`,
      )
    }
    const unknown = existing.keyIds.filter((id) => !box.knows(id))
    if (unknown.length) {
      throw new SecretsKeyError(
        `stored secrets may be encrypted with key id ${unknown.join(', ')}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS is; ${ROTATION_HINT}`,
      )
    }
    if (existing.keyIds.includes(box.current!.id)) return { writes: {}, result: undefined }
    // This process seals with its key from now on: later starts must know that key too.
    return {
      writes: { set: { [KEY_CHECK_KEY]: { ...existing, keyIds: [...existing.keyIds, box.current!.id] } } },
      result: undefined,
    }
  })
}
