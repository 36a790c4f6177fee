import fc from 'fast-check'
import satisfies from 'spdx-satisfies'
import { describe, expect, it } from 'vitest'
import {
  SPDX_MAX_LENGTH,
  SPDX_MAX_OPERATORS,
  licenseSatisfied,
  licenseShown,
  withinSpdxBounds,
} from '../../server/firewall/rules/license'

// Ids from ranges (GPL family, Apache, BSD), with `-only`/`-or-later` forms, `+` and an exception:
// the cases where the two evaluators could disagree. Ids of 4 or 8 characters are left out:
// spdx-satisfies' own `endsWith` misreads them (e.g. `LGPL-2.0` as `LGPL-2.0+`).
const ids = ['MIT', 'ISC', 'Apache-1.1', 'Apache-2.0', 'GPL-2.0-only', 'GPL-2.0-or-later', 'GPL-3.0-only']
const ids2 = [...ids, 'LGPL-2.1-only', 'LGPL-3.0-or-later', 'BSD-3-Clause', 'MPL-2.0', 'AGPL-3.0-only']
const leaf = fc.oneof(
  fc.constantFrom(...ids2),
  fc.constantFrom('Apache-1.1+', 'MPL-1.1+', 'GPL-2.0-only WITH Classpath-exception-2.0'),
)
const expression: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(tie('node'), fc.constantFrom('AND', 'OR'), tie('node')).map(([a, op, b]) => `(${a} ${op} ${b})`),
  ),
})).node
const set = fc.uniqueArray(fc.constantFrom(...ids2, 'Apache-1.1+', 'GPL-2.0-only WITH Classpath-exception-2.0'), {
  minLength: 1,
  maxLength: 5,
})

/** `(MIT OR Apache-2.0) AND ...` repeated: spdx-satisfies' work doubles with each term. */
const doubling = (terms: number) => Array.from({ length: terms }, () => '(MIT OR Apache-2.0)').join(' AND ')

describe('licenseSatisfied (bounded, linear)', () => {
  it('agrees with spdx-satisfies on ordinary expressions', () => {
    fc.assert(
      fc.property(expression.filter(withinSpdxBounds), set, (expr, approved) => {
        expect(licenseSatisfied(expr, approved)).toBe(satisfies(expr, approved))
      }),
      { numRuns: 400 },
    )
  })

  it('keeps the GPL and `+` readings', () => {
    expect(licenseSatisfied('GPL-3.0-or-later', ['GPL-3.0-only'])).toBe(true)
    expect(licenseSatisfied('GPL-2.0-only', ['GPL-3.0-only'])).toBe(false)
    expect(licenseSatisfied('Apache-2.0', ['Apache-1.1+'])).toBe(true)
    expect(licenseSatisfied('GPL-2.0-only WITH Classpath-exception-2.0', ['GPL-2.0-only'])).toBe(false)
    expect(licenseSatisfied('UNLICENSED', ['MIT'])).toBeNull()
  })

  it('evaluates 22 doubling AND terms (547 characters) at once', () => {
    // On e486deb this took 2^22 alternatives (7 s in the attack review); here it is 44 leaves.
    expect(licenseSatisfied(doubling(22), ['Apache-2.0'])).toBe(true)
    expect(licenseSatisfied(`${doubling(21)} AND GPL-3.0-only`, ['MIT'])).toBe(false)
  })

  it('evaluates an expression at both bounds', () => {
    // 64 operators: 32 terms of `(MIT OR ISC)` joined by AND make 32 OR + 31 AND = 63, plus one.
    const atBound = `${doubling(32).replaceAll('Apache-2.0', 'ISC')} OR MIT`
    expect(atBound.length).toBeLessThanOrEqual(SPDX_MAX_LENGTH)
    expect(atBound.match(/\b(AND|OR)\b/g)).toHaveLength(SPDX_MAX_OPERATORS)
    expect(licenseSatisfied(atBound, ['ISC'])).toBe(true)
    const long = `${'('.repeat(500)}MIT${')'.repeat(500)}`.padEnd(SPDX_MAX_LENGTH, ' ')
    expect(long).toHaveLength(SPDX_MAX_LENGTH)
    expect(licenseSatisfied(long, ['MIT'])).toBe(true)
  })

  it('counts an expression past either bound as undeclared', () => {
    const operators = `${doubling(32).replaceAll('Apache-2.0', 'ISC')} OR MIT OR MIT`
    expect(operators.length).toBeLessThanOrEqual(SPDX_MAX_LENGTH)
    expect(licenseSatisfied(operators, ['ISC', 'MIT'])).toBeNull()
    const long = `MIT${' '.repeat(SPDX_MAX_LENGTH - 2)}`
    expect(long).toHaveLength(SPDX_MAX_LENGTH + 1)
    expect(licenseSatisfied(long, ['MIT'])).toBeNull()
    expect(licenseSatisfied(doubling(3000), ['MIT'])).toBeNull()
  })

  it('names, rather than echoes, an oversized expression', () => {
    expect(licenseShown(doubling(3000))).toMatch(/over 1024 characters or 64 operators/)
    expect(licenseShown('MIT')).toBe('MIT')
  })
})
