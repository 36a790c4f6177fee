import { timingSafeEqual } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { ReceiverConfigError, WebhookVerificationError, type VerificationCode } from './errors'

/** Headers as node:http, fetch or a plain object carry them. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>

/** A raw body exactly as it arrived: the signature covers these bytes, not a re-serialised JSON. */
export type RawBody = string | Uint8Array

export interface VerifyOptions {
  /** Accepted distance between `webhook-timestamp` and now, in seconds (default 300, the package's). */
  toleranceSeconds?: number
  /** Clock in milliseconds (tests). */
  now?: () => number
}

/** What a verified request told us. */
export interface Verified {
  /** `webhook-id`: the delivery id, the same on every retry of one delivery. */
  deliveryId: string
  /** `webhook-timestamp` in seconds. */
  timestamp: number
  /** Index in `secrets` of the secret that verified (during a rotation, either may). */
  secretIndex: number
}

/** The Standard Webhooks default: 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60

/** Reads one header whatever the carrier; repeated node headers are joined as HTTP does. */
export function headerValue(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const record = headers as Record<string, string | string[] | undefined>
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== name) continue
    const value = record[key]
    return Array.isArray(value) ? value.join(', ') : value
  }
  return undefined
}

/**
 * One `Webhook` of the `standardwebhooks` package per secret (`whsec_` prefix optional).
 * @throws ReceiverConfigError when there is no secret or one is not valid base64 (never naming it).
 */
export function signers(secrets: string | readonly string[]): Webhook[] {
  const list = typeof secrets === 'string' ? [secrets] : [...secrets]
  if (list.length === 0) throw new ReceiverConfigError('no webhook secret configured')
  return list.map((secret, index) => {
    try {
      return new Webhook(secret.trim())
    } catch {
      throw new ReceiverConfigError(`webhook secret #${index + 1} is not a base64 key (whsec_...)`)
    }
  })
}

/**
 * Verifies a Standard Webhooks request against several secrets: any one matching verifies, so
 * during a secret rotation a receiver configured with the new secret, the old one or both
 * accepts what the sender signs with both. The HMAC and key format are the `standardwebhooks`
 * package's (`Webhook#sign`); the timestamp window is judged here because the package fixes it
 * at 5 minutes on `Date.now()`.
 * @example
 * const { deliveryId } = verify(rawBody, req.headers, [process.env.WEBHOOK_SECRET!])
 * @throws WebhookVerificationError (`code` says why; 400 or 401 as `status`)
 */
export function verify(
  rawBody: RawBody,
  headers: HeadersLike,
  secrets: string | readonly string[] | Webhook[],
  options: VerifyOptions = {},
): Verified {
  const keys = isSigners(secrets) ? secrets : signers(secrets)
  const deliveryId = headerValue(headers, 'webhook-id')
  const timestampText = headerValue(headers, 'webhook-timestamp')?.trim()
  const signatureText = headerValue(headers, 'webhook-signature')
  if (!deliveryId || !timestampText || !signatureText) {
    throw refuse('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are required')
  }
  if (!/^\d{1,12}$/.test(timestampText)) throw refuse('invalid_timestamp', 'webhook-timestamp is not whole seconds')
  const timestamp = Number(timestampText)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const now = Math.floor((options.now ?? Date.now)() / 1000)
  if (now - timestamp > tolerance)
    throw refuse('timestamp_too_old', `webhook-timestamp is more than ${tolerance} s old`)
  if (timestamp - now > tolerance)
    throw refuse('timestamp_too_new', `webhook-timestamp is more than ${tolerance} s ahead`)

  // The header lists space-separated `v1,<base64>` signatures (one per secret the sender holds).
  const passed = signatureText
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3)))
  const payload =
    typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength)
  const signedAt = new Date(timestamp * 1000)
  for (const [secretIndex, key] of keys.entries()) {
    const expected = Buffer.from(key.sign(deliveryId, signedAt, payload).slice(3))
    if (passed.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected))) {
      return { deliveryId, timestamp, secretIndex }
    }
  }
  throw refuse('no_matching_signature', 'no webhook-signature matches a configured secret')
}

const refuse = (code: VerificationCode, message: string) => new WebhookVerificationError(code, message)
const isSigners = (secrets: unknown): secrets is Webhook[] => Array.isArray(secrets) && secrets[0] instanceof Webhook
