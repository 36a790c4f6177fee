/**
 * Package-name globs. `*` matches any run of characters, including the `/` of a scoped npm
 * name (npm names have at most that one slash, so `*` meaning "every package" is the least
 * surprising reading); `?` matches one character; everything else is literal.
 */
const cache = new Map<string, RegExp>()

/**
 * Compiles a glob into an anchored regular expression (cached: rules are evaluated per request).
 * @example globToRegExp('@scope/*').test('@scope/pkg') // true
 */
export function globToRegExp(pattern: string): RegExp {
  let compiled = cache.get(pattern)
  if (compiled) return compiled
  let source = ''
  for (const char of pattern) {
    if (char === '*') source += '.*'
    else if (char === '?') source += '.'
    else source += char.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
  }
  compiled = new RegExp(`^${source}$`, 's')
  // Bounded so that a stream of distinct patterns cannot grow memory without limit.
  if (cache.size > 10_000) cache.clear()
  cache.set(pattern, compiled)
  return compiled
}

/**
 * Whether `name` matches `pattern`; a pattern without wildcards is a plain equality test.
 * @example matchesGlob('lodash*', 'lodash.get') // true
 */
export function matchesGlob(pattern: string, name: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === name
  return globToRegExp(pattern).test(name)
}
