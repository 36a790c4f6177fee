import { isDeepStrictEqual } from 'node:util'
import type { Backend } from '../backend'
import type { FirewallVersion, StoredFirewall } from '../model/firewall'
import type { WebhookRecord } from '../model/webhook'
import { keys as storageKeys } from '../repositories/keys'
import { freshKeyCheck, KEY_CHECK_KEY, SecretsKeyError, verifySecretsKey } from './key-check'
import type { SecretBox } from './secret-box'
import {
  mapFirewallSecrets,
  mapWebhookSecrets,
  SESSION_SECRET_CONTEXT,
  SESSION_SECRET_KEY,
  type SecretTransform,
} from './secret-fields'

interface RotationResult {
  /** Secret values sealed anew with the current key (plaintext ones included). */
  secrets: number
  /** Stored records rewritten. */
  records: number
  keyId: string
}

type Reseal = (stored: unknown, transform: SecretTransform) => unknown

/** Which stored keys hold secrets, and how to re-seal each (namespace keys: keys.ts; ids never contain ':'). */
function resealerFor(key: string): Reseal | null {
  if (key === SESSION_SECRET_KEY)
    return (stored, transform) => (typeof stored === 'string' ? transform(stored, SESSION_SECRET_CONTEXT) : stored)
  const parsed = storageKeys.parseNamespaceKey(key)
  if (!parsed) return null
  const { ns, parts } = parsed
  const [kind, id] = parts
  if (kind === 'fw' && parts.length === 2)
    return (stored, transform) => mapFirewallSecrets(stored as StoredFirewall, ns, id, transform)
  if (kind === 'fw-history' && parts.length === 3) {
    return (stored, transform) => ({
      ...(stored as FirewallVersion),
      config: mapFirewallSecrets((stored as FirewallVersion).config, ns, id, transform),
    })
  }
  if (kind === 'wh' && parts.length === 2)
    return (stored, transform) => mapWebhookSecrets(stored as WebhookRecord, ns, id, transform)
  return null
}

class ChangedMeanwhile extends Error {}

/**
 * Re-seals one stored record; returns how many values changed. Atomic on Redis (compare-and-set
 * against the running service); on fs the service's locks are in its own process, so the value
 * is read again just before the write and the pass retried when a write landed meanwhile.
 */
async function resealKey(backend: Backend, box: SecretBox, key: string, reseal: Reseal): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      return await backend.keyValue.transact([key], async (values) => {
        const stored = values.get(key)
        if (stored == null) return { writes: {}, result: 0 }
        let count = 0
        const next = reseal(stored, (value, context) => {
          if (!box.needsReseal(value)) return value
          count++
          return box.seal(box.open(value, context), context)
        })
        if (count === 0) return { writes: {}, result: 0 }
        if (backend.kind === 'local' && !isDeepStrictEqual(await backend.keyValue.get(key), stored))
          throw new ChangedMeanwhile()
        return { writes: { set: { [key]: next } }, result: count }
      })
    } catch (error) {
      if (!(error instanceof ChangedMeanwhile)) throw error
    }
  }
  throw new Error(`${key} kept changing during the rotation; run it again`)
}

/**
 * `rotate-secrets-key`: seals every stored secret (firewalls, their whole history, webhooks,
 * the dashboard session secret) with SECRETS_KEY, opening old ones with SECRETS_KEY_PREVIOUS,
 * then records that only SECRETS_KEY is in use. Safe to run again; plaintext values are sealed too.
 */
export async function rotateSecretsKey(backend: Backend, box: SecretBox): Promise<RotationResult> {
  if (!box.enabled)
    throw new SecretsKeyError(
      'rotate-secrets-key needs SECRETS_KEY (the new key) and, while values of the old one remain, SECRETS_KEY_PREVIOUS',
    )
  await verifySecretsKey(backend, box)
  const keys = [...(await backend.keyValue.keys(storageKeys.namespacePrefix)), SESSION_SECRET_KEY]
  let secrets = 0
  let records = 0
  for (const key of keys) {
    const reseal = resealerFor(key)
    if (!reseal) continue
    const count = await resealKey(backend, box, key, reseal)
    secrets += count
    if (count > 0) records++
  }
  await backend.keyValue.set(KEY_CHECK_KEY, freshKeyCheck(box))
  return { secrets, records, keyId: box.current!.id }
}
