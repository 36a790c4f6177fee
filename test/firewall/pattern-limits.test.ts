import { describe, expect, it } from 'vitest'
import { DomainError } from '../../server/common/errors'
import { fieldErrors } from '../../server/http/problem'
import { ExceptionSelector, FirewallInput, Rule } from '../../server/firewall/schema'
import { patternLimitProblems, refuseOversizedPatterns } from '../../server/firewall/rules/pattern-limits'

const names = (count: number, prefix = 'pkg-') => Array.from({ length: count }, (_, i) => `${prefix}${i}`)
const byName = (patterns: string[]) => ({ function: { name: 'packageName' as const, patterns } })
const rule = (selector: object) => ({ id: 'r', executionPhase: 'download', selector })

function errorsOf(schema: { safeParse: (v: unknown) => { success: boolean; error?: unknown } }, value: unknown) {
  const result = schema.safeParse(value)
  expect(result.success).toBe(false)
  return fieldErrors(result.error as Parameters<typeof fieldErrors>[0])
}

describe('package-name pattern limits in the schema', () => {
  it('accepts a 214-character pattern and 1,000 patterns', () => {
    expect(Rule.safeParse(rule(byName(['a'.repeat(213) + '*']))).success).toBe(true)
    expect(Rule.safeParse(rule(byName(names(1000)))).success).toBe(true)
  })

  it('refuses a 215-character pattern, pointing at it', () => {
    const errors = errorsOf(Rule, rule(byName(['lodash', `${'a'.repeat(214)}*`])))
    expect(errors).toEqual([
      { path: 'selector.function.patterns[1]', message: 'a package-name pattern is at most 214 characters' },
    ])
  })

  it('refuses 1,001 patterns in one selector', () => {
    const errors = errorsOf(Rule, rule(byName(names(1001))))
    expect(errors).toEqual([
      { path: 'selector.function.patterns', message: 'a rule holds at most 1000 package-name patterns' },
    ])
  })

  it('refuses 1,001 patterns spread over the selectors of one rule, pointing at the first one too many', () => {
    const negated = { function: { name: 'not', selector: byName(names(401)) } }
    const selector = { function: { name: 'any', selectors: [byName(names(600)), negated] } }
    const errors = errorsOf(Rule, rule(selector))
    expect(errors).toEqual([
      {
        path: 'selector.function.selectors[1].function.selector.function.patterns[400]',
        message: 'a rule holds at most 1000 package-name patterns',
      },
    ])
  })

  it('keeps Rule extendable (the PUT rule body is Rule.extend(...): zod refuses that with refinements on Rule)', () => {
    const body = Rule.extend({ id: Rule.shape.id.optional() })
    expect(body.safeParse({ ...rule(byName(['a*'])), id: undefined }).success).toBe(true)
    expect(body.safeParse(rule(byName(names(1001)))).success).toBe(false)
  })

  it('counts per rule, not per firewall', () => {
    const input = {
      rules: [
        { ...rule(byName(names(1000))), id: 'a' },
        { ...rule(byName(names(1000))), id: 'b' },
      ],
    }
    expect(FirewallInput.safeParse(input).success).toBe(true)
  })

  it('applies the length limit to exception selectors, which are globs too', () => {
    expect(ExceptionSelector.safeParse({ packageName: `@acme/${'x'.repeat(208)}` }).success).toBe(true)
    const errors = errorsOf(ExceptionSelector, { packageName: `@acme/${'x'.repeat(209)}` })
    expect(errors).toEqual([{ path: 'packageName', message: 'a package-name pattern is at most 214 characters' }])
  })
})

describe('refuseOversizedPatterns (stored rules, e.g. a rollback)', () => {
  it('lets rules within the limits through', () => {
    expect(() => refuseOversizedPatterns([rule(byName(names(1000))) as Rule])).not.toThrow()
  })

  it('refuses with validation_failed and a path into the rules list', () => {
    const rules = [rule(byName(['ok'])), rule(byName([...names(1000), 'x'.repeat(215)]))] as Rule[]
    let thrown: unknown
    try {
      refuseOversizedPatterns(rules)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(DomainError)
    const error = thrown as DomainError
    expect(error.code).toBe('validation_failed')
    expect(error.details.errors).toEqual([
      { path: 'rules[1].selector.function.patterns[1000]', message: 'a rule holds at most 1000 package-name patterns' },
      {
        path: 'rules[1].selector.function.patterns[1000]',
        message: 'a package-name pattern is at most 214 characters',
      },
    ])
  })

  it('reports each long pattern but the count only once', () => {
    const problems = patternLimitProblems(rule(byName([...names(1002), 'y'.repeat(300)])) as Rule)
    expect(problems.map((p) => [p.kind, p.path.at(-1)])).toEqual([
      ['count', 1000],
      ['length', 1002],
    ])
  })
})
