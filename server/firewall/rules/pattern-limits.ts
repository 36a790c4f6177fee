/** Longest package-name pattern a rule or exception may hold (npm's own name limit). */
export const MAX_PATTERN_LENGTH = 214
/** Most package-name patterns one rule may hold, all its selectors together. */
export const MAX_PATTERNS_PER_RULE = 1000

/** A place in a rule, as zod paths are: `['selector', 'function', 'patterns', 3]`. */
type RulePath = (string | number)[]

/**
 * What the limits read of a selector: the package-name patterns and the selectors nested in
 * `all`, `any` and `not`. Every selector of schema.ts fits it (this file does not import the
 * schema, which checks the limits with it).
 */
interface PatternSelector {
  function: {
    name: string
    patterns?: readonly string[]
    selectors?: readonly PatternSelector[]
    selector?: PatternSelector
  }
}

interface PatternLimitProblem {
  kind: 'length' | 'count'
  path: RulePath
  message: string
}

function* patternsOf(selector: PatternSelector, path: RulePath): Generator<{ pattern: string; path: RulePath }> {
  const fn = selector.function
  if (fn.name === 'packageName') {
    for (const [i, pattern] of (fn.patterns ?? []).entries())
      yield { pattern, path: [...path, 'function', 'patterns', i] }
  } else if (fn.name === 'all' || fn.name === 'any') {
    for (const [i, child] of (fn.selectors ?? []).entries())
      yield* patternsOf(child, [...path, 'function', 'selectors', i])
  } else if (fn.name === 'not' && fn.selector) {
    yield* patternsOf(fn.selector, [...path, 'function', 'selector'])
  }
}

/**
 * What a rule breaks of the pattern limits (judged by validateFirewall, ../validation.ts): each pattern over the length limit, and the first
 * pattern past the count limit (one entry: a list of thousands of errors helps nobody).
 * @example patternLimitProblems(rule) // [{ path: ['selector', 'function', 'patterns', 1000], message: '...' }]
 */
export function patternLimitProblems(rule: { selector: PatternSelector }): PatternLimitProblem[] {
  const problems: PatternLimitProblem[] = []
  let count = 0
  for (const { pattern, path } of patternsOf(rule.selector, ['selector'])) {
    count++
    if (count === MAX_PATTERNS_PER_RULE + 1) {
      problems.push({
        kind: 'count',
        path,
        message: `a rule holds at most ${MAX_PATTERNS_PER_RULE} package-name patterns`,
      })
    }
    if (pattern.length > MAX_PATTERN_LENGTH) {
      problems.push({
        kind: 'length',
        path,
        message: `a package-name pattern is at most ${MAX_PATTERN_LENGTH} characters`,
      })
    }
  }
  return problems
}
