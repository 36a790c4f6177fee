import { z } from 'zod'
import type { FieldError } from '../../common/errors'

/**
 * Per-webhook custom request headers (#14): sent on every attempt, beside the Standard Webhooks
 * headers. Values may be credentials for the receiver, so every read shows the placeholder and
 * a `PUT` carrying the placeholder keeps the stored value (as upstream credentials do).
 */

/** Custom headers a webhook may carry. */
const MAX_CUSTOM_HEADERS = 10

/** Token characters minus `_` and friends: plain header names only (`__proto__` cannot be one). */
const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/, 'a header name: letters, digits and -, at most 64')
/** Visible ASCII and spaces only: no CR, LF or NUL can split the request. */
const HeaderValue = z
  .string()
  .max(1024)
  .regex(/^[\x20-\x7e]*$/, 'printable ASCII only, at most 1024 characters')

/**
 * The `headers` object of a webhook body. Zod's record silently skips an own `__proto__` key, so
 * it is refused here first: a name the client sent never disappears without an answer.
 */
export const CustomHeaders = z.preprocess(
  (value, ctx) => {
    if (value && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, '__proto__')) {
      ctx.addIssue({ code: 'custom', message: 'not a header name', path: ['__proto__'] })
    }
    return value
  },
  z.record(HeaderName, HeaderValue),
)

/** Names the sender owns or that break the framing of the request (RFC 9110 7.6.1 hop-by-hop ones included). */
const RESERVED = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'user-agent',
  'host',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

/** Why `name` cannot be a custom header, or null when it can. */
function reservedHeaderReason(name: string): string | null {
  const lower = name.toLowerCase()
  if (lower.startsWith('webhook-')) return 'webhook-* headers are set by the sender (Standard Webhooks)'
  if (RESERVED.has(lower)) return `"${lower}" is set by the sender or is a hop-by-hop header`
  return null
}

/**
 * Count, reserved names and names repeated in another case; `keepable` are the stored names a
 * placeholder value may keep. Paths are `headers.<name>` so the client sees which one.
 * @example validateCustomHeaders({ 'User-Agent': 'x' }, new Set())[0].path // 'headers.User-Agent'
 */
export function validateCustomHeaders(
  headers: Record<string, string>,
  keepable: ReadonlySet<string>,
  placeholder: string,
): FieldError[] {
  const entries = Object.entries(headers)
  const errors: FieldError[] = []
  if (entries.length > MAX_CUSTOM_HEADERS)
    errors.push({ path: 'headers', message: `at most ${MAX_CUSTOM_HEADERS} custom headers` })
  const seen = new Set<string>()
  for (const [name, value] of entries) {
    const lower = name.toLowerCase()
    const reason = reservedHeaderReason(name)
    if (reason) errors.push({ path: `headers.${name}`, message: reason })
    else if (seen.has(lower))
      errors.push({ path: `headers.${name}`, message: 'given twice (header names ignore case)' })
    else if (value === placeholder && !keepable.has(lower))
      errors.push({ path: `headers.${name}`, message: `${placeholder} keeps a stored value, and this header has none` })
    seen.add(lower)
  }
  return errors
}

/**
 * The headers to store: a placeholder value keeps the stored value of that name (any case).
 * Built with `Object.fromEntries`, so every name is an own data property whatever it is.
 */
export function mergeCustomHeaders(
  incoming: Record<string, string>,
  stored: Record<string, string> | undefined,
  placeholder: string,
): Record<string, string> {
  const previous = new Map(Object.entries(stored ?? {}).map(([name, value]) => [name.toLowerCase(), value]))
  return Object.fromEntries(
    Object.entries(incoming).map(([name, value]) => [
      name,
      value === placeholder ? (previous.get(name.toLowerCase()) ?? value) : value,
    ]),
  )
}

/**
 * Header values belong to the origin of the URL they were given for (as upstream credentials
 * belong to their endpoint, credential-binding.ts): a placeholder never carries a stored value to
 * another origin. A new path on the same origin keeps it.
 * @example sameOrigin('https://R.example:443/a', 'https://r.example/b') // true
 */
export function sameOrigin(a: string, b: string): boolean {
  try {
    const from = new URL(a)
    const to = new URL(b)
    // `origin` is the string "null" for schemes without one: two of those are never the same.
    return from.origin !== 'null' && from.origin === to.origin
  } catch {
    return false
  }
}

/**
 * The placeholder values that would move a stored value from `fromUrl`'s origin to `toUrl`'s:
 * one error per header, path `headers.<name>`. Empty when the origin stays or nothing is kept.
 * @example placeholdersForNewOrigin({ 'X-Api-Key': '[REDACTED]' }, 'https://a.example', 'https://b.example', '[REDACTED]').length // 1
 */
export function placeholdersForNewOrigin(
  incoming: Record<string, string>,
  fromUrl: string,
  toUrl: string,
  placeholder: string,
): FieldError[] {
  if (sameOrigin(fromUrl, toUrl)) return []
  return Object.entries(incoming)
    .filter(([, value]) => value === placeholder)
    .map(([name]) => ({
      path: `headers.${name}`,
      message: `the URL's origin changed: ${placeholder} keeps a value only for its own origin; give the value again`,
    }))
}

/** The same names with every value replaced by the placeholder. */
export function redactCustomHeaders(headers: Record<string, string>, placeholder: string): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, placeholder]))
}
