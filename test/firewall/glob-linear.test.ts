import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { matchesGlob } from '../../server/firewall/rules/glob'

/**
 * Reference: the textbook dynamic-programming glob matcher. `can[i][j]` says whether the first
 * `i` characters of the pattern match the first `j` of the name. Slow but obviously right.
 */
function referenceMatch(pattern: string, name: string): boolean {
  const can = Array.from({ length: pattern.length + 1 }, () => new Array<boolean>(name.length + 1).fill(false))
  can[0][0] = true
  for (let i = 1; i <= pattern.length; i++) {
    const p = pattern[i - 1]
    for (let j = 0; j <= name.length; j++) {
      if (p === '*') can[i][j] = can[i - 1][j] || (j > 0 && can[i][j - 1])
      else can[i][j] = j > 0 && can[i - 1][j - 1] && (p === '?' || p === name[j - 1])
    }
  }
  return can[pattern.length][name.length]
}

// A small alphabet, mostly two letters, makes matches, near misses and overlapping parts common;
// `/`, `@`, `.` are the characters package names use around the wildcards.
const patternChar = fc.oneof(
  { arbitrary: fc.constantFrom('a', 'b'), weight: 6 },
  { arbitrary: fc.constant('*'), weight: 3 },
  { arbitrary: fc.constantFrom('?', '/', '@', '.'), weight: 1 },
)
const nameChar = fc.oneof(
  { arbitrary: fc.constantFrom('a', 'b'), weight: 8 },
  { arbitrary: fc.constantFrom('/', '@', '.', '*', '?'), weight: 1 },
)
const pattern = fc.array(patternChar, { maxLength: 12 }).map((chars) => chars.join(''))
const name = fc.array(nameChar, { maxLength: 16 }).map((chars) => chars.join(''))

describe('matchesGlob agrees with a reference matcher', () => {
  it('on random patterns and names', () => {
    fc.assert(
      fc.property(pattern, name, (p, n) => {
        expect(matchesGlob(p, n)).toBe(referenceMatch(p, n))
      }),
      { numRuns: 20_000 },
    )
  })

  it('on names built to match the pattern (so that true answers are well covered)', () => {
    // Replace each wildcard of a random pattern by what it may stand for: the name then matches.
    const matching = fc
      .array(fc.tuple(patternChar, fc.array(nameChar, { maxLength: 3 }), nameChar), { maxLength: 10 })
      .map((parts) => ({
        pattern: parts.map(([p]) => p).join(''),
        name: parts.map(([p, run, one]) => (p === '*' ? run.join('') : p === '?' ? one : p)).join(''),
      }))
    fc.assert(
      fc.property(matching, ({ pattern: p, name: n }) => {
        expect(referenceMatch(p, n)).toBe(true)
        expect(matchesGlob(p, n)).toBe(true)
      }),
      { numRuns: 5_000 },
    )
  })
})

describe('matchesGlob edge cases', () => {
  it.each([
    ['', '', true],
    ['', 'a', false],
    ['*', '', true],
    ['***', '', true],
    ['***', '@acme/widgets', true],
    ['?', '', false],
    ['?', 'a', true],
    ['?', 'ab', false],
    ['a*', 'a', true],
    ['a*', 'abc', true],
    ['a*', 'ba', false],
    ['*a', 'ba', true],
    ['*a', 'ab', false],
    ['a*b*c', 'axxbyyc', true],
    ['a*b*c', 'axxbyyd', false],
    ['@acme/*', '@acme/widgets', true],
    ['@acme/*', '@acme/', true],
    ['@acme/*', '@acmex/widgets', false],
    ['@*/core', '@babel/core', true],
    ['@*/core', '@babel/core-js', false],
    ['*/*', '@types/node', true],
    ['*/*', 'lodash', false],
    ['@types/?ode', '@types/node', true],
    ['lodash.*', 'lodash.get', true],
    ['lodash.*', 'lodashxget', false],
    ['*.*', 'a.b', true],
    ['*ab', 'aab', true],
    ['*aab', 'aaab', true],
    ['*a*a*b', 'aaaaab', true],
    ['*a*a*b', 'aaaaaa', false],
  ])('%j against %j is %s', (p, n, expected) => {
    expect(matchesGlob(p, n)).toBe(expected)
    expect(referenceMatch(p, n)).toBe(expected)
  })

  it('treats RegExp syntax as literal characters', () => {
    expect(matchesGlob('a+(b)*', 'a+(b)c')).toBe(true)
    expect(matchesGlob('a+(b)*', 'aab')).toBe(false)
    expect(matchesGlob('^[x]$*', '^[x]$')).toBe(true)
    expect(matchesGlob('\\d*', '1')).toBe(false)
  })

  it('answers at once for the pattern that stalls a backtracking RegExp', () => {
    const attack = `${'*a'.repeat(30)}b`
    const victim = 'a'.repeat(214)
    const started = performance.now()
    expect(matchesGlob(attack, victim)).toBe(false)
    expect(matchesGlob(attack.slice(0, 214), victim)).toBe(false)
    // Quadratic at worst: 214 x 61 steps is far under this bound even on a slow, shared machine.
    expect(performance.now() - started).toBeLessThan(50)
  })
})
