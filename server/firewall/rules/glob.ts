/**
 * Package-name globs. `*` matches any run of characters, including the `/` of a scoped npm
 * name (npm names have at most that one slash, so `*` meaning "every package" is the least
 * surprising reading); `?` matches one character (UTF-16 code unit); everything else is literal.
 *
 * Matched without a RegExp: a pattern such as `*a*a*a…*b` makes a backtracking engine take
 * exponential time on a long name, and patterns come from clients (CONTRACT section 8).
 */

const STAR = 42 // '*'
const ANY = 63 // '?'

/**
 * Whether `name` matches `pattern`. Two pointers; on a mismatch the pattern resumes after the
 * last `*` seen, which then swallows one more character of the name. A later `*` makes earlier
 * ones irrelevant, so time is at most name length x pattern length, with no recursion.
 * @example matchesGlob('lodash*', 'lodash.get') // true
 * @example matchesGlob('@acme/*', '@acmex/widgets') // false
 */
export function matchesGlob(pattern: string, name: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === name
  let p = 0
  let n = 0
  let star = -1 // index in `pattern` of the last `*` seen
  let resume = 0 // index in `name` that `*` has swallowed up to
  while (n < name.length) {
    const c = pattern.charCodeAt(p)
    if (p < pattern.length && c !== STAR && (c === ANY || c === name.charCodeAt(n))) {
      p++
      n++
    } else if (p < pattern.length && c === STAR) {
      star = p++
      resume = n
    } else if (star >= 0) {
      p = star + 1
      n = ++resume
    } else {
      return false
    }
  }
  while (p < pattern.length && pattern.charCodeAt(p) === STAR) p++
  return p === pattern.length
}
