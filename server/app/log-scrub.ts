/**
 * What keeps secrets out of log lines. Callers already pass no secrets; this is the safety net
 * for when one slips. Two parts:
 * - pino's `redact` (logger.ts) censors the fields named in `REDACT_PATHS` at the top level of a
 *   line: the secret names as callers and HTTP spell them.
 * - `scrubFields` (pino's `formatters.log`) does what redact paths cannot say: it masks token
 *   material, webhook secrets, bearer/basic credentials and URL user info inside any text, and
 *   censors a secret-named field nested in an object or spelt another way.
 *   Why not nested redact paths (`*.token`, `*.*.token`): with 21 of these names at three depths
 *   (63 paths) pino wrote the delivery attempt line in 68-246 µs instead of 11-18 µs without
 *   (200,000 lines to /dev/null); top-level paths cost nothing measurable. This walk costs
 *   0.9 µs (access line) and 1.8 µs (attempt line), against 9 and 20 µs before the ANCHORS
 *   pre-check below. All on the 2-core machine under a load of 15-18, 2026-11-26.
 */
export const REDACTED = '[REDACTED]'

/** Field names whose values never reach a log line, compared in lower case. */
const SECRET_FIELDS = [
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
]
const SECRET = new Set(SECRET_FIELDS)

// Each name as written, Capitalised, in Header-Case and in upper case, plus the camelCase our code uses.
const SPELLINGS = new Set(
  SECRET_FIELDS.flatMap((name) => [
    name,
    name[0].toUpperCase() + name.slice(1),
    name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase()),
    name.toUpperCase(),
  ]).concat(['apiKey', 'previousSecret', 'X-NuGet-ApiKey']),
)

/** The top-level field paths pino's `redact` censors (bracketed where a name is not an identifier). */
export const REDACT_PATHS = [...SPELLINGS].map((name) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : `["${name}"]`))

// Token material of this service (fwp_/fws_), webhook secrets (whsec_), bearer/basic credentials, URL user info.
const PATTERNS: [RegExp, string][] = [
  [/\b(fwp|fws)_[A-Za-z0-9_-]{8,}/g, `$1_${REDACTED}`],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, `whsec_${REDACTED}`],
  // A credential has a digit or symbol somewhere; prose such as "Basic authentication" has not.
  [/\b(Bearer|Basic)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [/(\w+:\/\/)[^\s/@:]+:[^\s/@]+@/g, `$1${REDACTED}@`],
]

// One pass that finds none of the patterns' anchors lets ordinary text skip the four replacements.
const ANCHORS = /fw[ps]_|whsec_|bearer|basic|:\/\//i

function scrubText(text: string): string {
  if (!ANCHORS.test(text)) return text
  let out = text
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement)
  return out
}

function scrubValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrubText(value)
  if (value === null || typeof value !== 'object' || depth > 6) return value
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, depth + 1))
  // Defined, not assigned: a logged key `__proto__` (from parsed JSON) stays a key.
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      SECRET.has(key.toLowerCase()) ? REDACTED : scrubValue(item, depth + 1),
    ]),
  )
}

/**
 * The fields of one line with secret-looking text masked and secret-named fields censored, except
 * the top-level ones `REDACT_PATHS` names (pino's redact censors those). Copies only when it changes something.
 * @example scrubFields({ error: 'Bearer abc123def456' }) // { error: 'Bearer [REDACTED]' }
 */
export function scrubFields(fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields
  for (const key of Object.keys(fields)) {
    const value = fields[key]
    const next =
      SECRET.has(key.toLowerCase()) && !SPELLINGS.has(key)
        ? REDACTED
        : typeof value === 'string' || (typeof value === 'object' && value !== null)
          ? scrubValue(value, 1)
          : value
    if (next === value) continue
    if (out === fields) out = { ...fields }
    Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true })
  }
  return out
}
