/**
 * A safety net under the logger: callers already pass no secrets, but a field named like a
 * credential, a bearer token inside an error text or a URL with user info must never reach
 * a log line even when a caller slips.
 */
const SECRET_KEYS = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'password',
  'secret',
  'token',
  'credentials',
  'signature',
  'payload',
  'body',
  'headers',
  'apikey',
  'api_key',
  'x-nuget-apikey',
  'previoussecret',
])
const REDACTED = '[REDACTED]'
// Token material of this service (fwp_/fws_), webhook secrets (whsec_), bearer/basic credentials, URL user info.
const PATTERNS: [RegExp, string][] = [
  [/\b(fwp|fws)_[A-Za-z0-9_-]{8,}/g, `$1_${REDACTED}`],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, `whsec_${REDACTED}`],
  // A credential has a digit or symbol somewhere; prose such as "Basic authentication" has not.
  [/\b(Bearer|Basic)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [/(\w+:\/\/)[^\s/@:]+:[^\s/@]+@/g, `$1${REDACTED}@`],
]

function scrubString(text: string): string {
  let out = text
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement)
  return out
}

/**
 * Returns the fields with secret-named keys replaced and secret-looking text masked.
 * @example scrubFields({ token: 'fwp_abc...' }) // { token: '[REDACTED]' }
 */
export function scrubFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubString(value)
  if (value === null || typeof value !== 'object' || depth > 6) return value
  if (Array.isArray(value)) return value.map((item) => scrubFields(item, depth + 1))
  // Defined, not assigned: a logged key `__proto__` (from parsed JSON) stays a key.
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      SECRET_KEYS.has(key.toLowerCase()) ? REDACTED : scrubFields(item, depth + 1),
    ]),
  )
}
