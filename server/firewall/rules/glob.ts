/**
 * Package-name globs. `*` matches any run of characters, including the `/` of a scoped npm
 * name (npm names have at most that one slash, so `*` meaning "every package" is the least
 * surprising reading); `?` matches one character (UTF-16 code unit); everything else is literal.
 *
 * Matched without a RegExp: a pattern such as `*a*a*a…*b` makes a backtracking engine take
 * exponential time on a long name, and patterns come from clients.
 */

const ANY = 63 // '?'

/** A pattern cut at its stars: `head*s1*s2*tail`. */
interface Glob {
  head: string
  /** The star-free parts between the first and the last star, empty ones dropped. */
  middle: string[]
  tail: string
  starred: boolean
  /** Whether any part holds a `?` (else the fast native `indexOf` finds parts). */
  wildcard: boolean
}

// Rules are evaluated per request, so patterns are cut once. Bounded, so that a stream of
// distinct patterns cannot grow memory without limit.
export const GLOB_CACHE_PATTERNS = 10_000
const cache = new Map<string, Glob>()

/** Patterns cut and kept now (at most GLOB_CACHE_PATTERNS). */
export function globCacheSize(): number {
  return cache.size
}

function parse(pattern: string): Glob {
  let glob = cache.get(pattern)
  if (glob) return glob
  const parts = pattern.split('*')
  const wildcard = pattern.includes('?')
  glob =
    parts.length === 1
      ? { head: pattern, middle: [], tail: '', starred: false, wildcard }
      : { head: parts[0], middle: parts.slice(1, -1).filter(Boolean), tail: parts.at(-1)!, starred: true, wildcard }
  if (cache.size >= GLOB_CACHE_PATTERNS) cache.clear()
  cache.set(pattern, glob)
  return glob
}

/** Whether the star-free `part` matches `name` at `at`. */
function partAt(part: string, name: string, at: number): boolean {
  for (let i = 0; i < part.length; i++) {
    const c = part.charCodeAt(i)
    if (c !== ANY && c !== name.charCodeAt(at + i)) return false
  }
  return true
}

/** Leftmost index `>= from` where `part` matches and ends by `end`, else -1. */
function find(part: string, wildcard: boolean, name: string, from: number, end: number): number {
  if (!wildcard) {
    const at = name.indexOf(part, from)
    return at >= 0 && at + part.length <= end ? at : -1
  }
  for (let at = from; at + part.length <= end; at++) if (partAt(part, name, at)) return at
  return -1
}

/**
 * Whether `name` matches `pattern`. Head and tail have fixed lengths, so they are compared in
 * place at both ends of the name. The middle parts are then placed, in order, each at its
 * leftmost fit after the previous one, and never moved again: this is the classic two-pointer
 * matcher's "resume after the last star" (a later star makes the earlier ones irrelevant) in
 * segment form. No recursion, no backtracking: at most name length x pattern length steps.
 * @example matchesGlob('lodash*', 'lodash.get') // true
 * @example matchesGlob('@acme/*', '@acmex/widgets') // false
 */
export function matchesGlob(pattern: string, name: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === name
  const glob = parse(pattern)
  if (!glob.starred) return pattern.length === name.length && partAt(pattern, name, 0)
  const end = name.length - glob.tail.length
  if (end < glob.head.length || !partAt(glob.head, name, 0) || !partAt(glob.tail, name, end)) return false
  let at = glob.head.length
  for (const part of glob.middle) {
    const found = find(part, glob.wildcard, name, at, end)
    if (found < 0) return false
    at = found + part.length
  }
  return true
}
