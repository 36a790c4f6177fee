import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'

/**
 * A new signing secret: `whsec_` + base64 of 32 random bytes.
 * @example generateSecret() // 'whsec_q1w2...='
 */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64')
}

/** The binary HMAC key inside a `whsec_` secret; throws on anything else. */
function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('webhook secret must start with whsec_')
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  if (key.length === 0) throw new Error('webhook secret holds no key')
  return key
}

/**
 * One `v1,<base64>` signature over `{id}.{timestamp}.{body}`.
 * `body` must be the exact bytes sent.
 * @example sign(secret, 'whdel-1', 1700000000, '{"version":1,"events":[]}')
 */
export function sign(secret: string, id: string, timestampSeconds: number, body: string | Buffer): string {
  const hmac = createHmac('sha256', secretKey(secret))
  hmac.update(`${id}.${timestampSeconds}.`)
  hmac.update(body)
  return `v1,${hmac.digest('base64')}`
}

/**
 * The `webhook-signature` header value: one signature per secret, space-separated
 * (two during the overlap after a rotation: new first, then previous).
 */
export function signatureHeader(
  secrets: string[],
  id: string,
  timestampSeconds: number,
  body: string | Buffer,
): string {
  if (secrets.length === 0) throw new Error('at least one secret is needed to sign')
  return secrets.map((secret) => sign(secret, id, timestampSeconds, body)).join(' ')
}

/**
 * Compares two strings in constant time (for secrets, tokens and signatures).
 * Length differences return false without an early exit on content.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  // Compare against itself when lengths differ so the time spent does not depend on where they differ.
  if (left.length !== right.length) {
    timingSafeEqual(left, left)
    return false
  }
  return timingSafeEqual(left, right)
}

/**
 * True when any `v1,` value of a signature header matches one of `secrets` (receiver side;
 * used by tests and by the service when it checks its own output).
 */
export function verifySignatureHeader(
  header: string,
  secrets: string[],
  id: string,
  timestampSeconds: number,
  body: string | Buffer,
): boolean {
  const received = header.split(' ').filter((value) => value.startsWith('v1,'))
  let matched = false
  for (const secret of secrets) {
    const expected = sign(secret, id, timestampSeconds, body)
    // No early exit: check every pair so timing does not reveal which one matched.
    for (const value of received) matched = constantTimeEqual(value, expected) || matched
  }
  return matched
}
