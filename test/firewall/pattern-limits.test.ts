import { describe, expect, it } from 'vitest'
import { DomainError } from '../../server/common/errors'
import { fieldErrors } from '../../server/http/problem'
import { ExceptionSelector, FirewallInput, Rule, type Firewall } from '../../server/firewall/schema'
import { patternLimitProblems } from '../../server/firewall/rules/pattern-limits'
import { validateFirewall, type FirewallValidationContext } from '../../server/firewall/validation'
import { configFromEnv } from '../../server/app/config'
import { CountingSlice } from '../support/counting-slice'

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

/** A context for a firewall of nothing but `rules`: no license sets, bases or stored versions. */
function context(overrides: Partial<FirewallValidationContext> = {}): FirewallValidationContext {
  return {
    id: 'fw',
    previous: null,
    startsFrom: null,
    rules: 'all',
    licenseSetIds: new Set(),
    firewalls: new Map(),
    readable: () => true,
    upstreamAddresses: configFromEnv({}).upstreamAddresses,
    ...overrides,
  }
}

async function refusal(rules: Rule[], overrides: Partial<FirewallValidationContext> = {}): Promise<DomainError> {
  const config = { ecosystem: 'npm' as const, upstreams: [], exceptions: [], extends: [], rules }
  try {
    await validateFirewall(config, context(overrides))
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError)
    return error as DomainError
  }
  throw new Error('validateFirewall accepted the rules')
}

describe('pattern limits in validateFirewall (every write, stored rules of a rollback too)', () => {
  it('lets rules within the limits through', async () => {
    const config = { ecosystem: 'npm' as const, upstreams: [], exceptions: [], extends: [] }
    await expect(
      validateFirewall({ ...config, rules: [rule(byName(names(1000))) as Rule] }, context()),
    ).resolves.toBeUndefined()
  })

  it('refuses with validation_failed and a path into the rules list', async () => {
    const rules = [rule(byName(['ok'])), rule(byName([...names(1000), 'x'.repeat(215)]))] as Rule[]
    const error = await refusal(rules)
    expect(error.code).toBe('validation_failed')
    expect(error.details.errors).toEqual([
      { path: 'rules[1].selector.function.patterns[1000]', message: 'a rule holds at most 1000 package-name patterns' },
      {
        path: 'rules[1].selector.function.patterns[1000]',
        message: 'a package-name pattern is at most 214 characters',
      },
    ])
  })

  it('refuses 1,001 patterns spread over the selectors of one rule, pointing at the first one too many', async () => {
    const negated = { function: { name: 'not', selector: byName(names(401)) } }
    const selector = { function: { name: 'any', selectors: [byName(names(600)), negated] } }
    const error = await refusal([Rule.parse(rule(selector))], { bodyAt: 'rules[0]' })
    expect(error.details.errors).toEqual([
      {
        path: 'selector.function.selectors[1].function.selector.function.patterns[400]',
        message: 'a rule holds at most 1000 package-name patterns',
      },
    ])
  })

  it('in a partial edit, judges only the rules it changes (a stored one over the limits does not lock the firewall)', async () => {
    const stored = rule(byName(names(1001))) as Rule
    const previous = { id: 'fw', rules: [stored] } as unknown as Firewall
    const config = { ecosystem: 'npm' as const, upstreams: [], exceptions: [], extends: [], rules: [stored] }
    await expect(
      validateFirewall(config, context({ previous, startsFrom: previous, rules: 'changed' })),
    ).resolves.toBeUndefined()
    expect((await refusal([stored], { previous, startsFrom: previous, rules: 'all' })).code).toBe('validation_failed')
  })

  it('reports each long pattern but the count only once', () => {
    const problems = patternLimitProblems(rule(byName([...names(1002), 'y'.repeat(300)])) as Rule)
    expect(problems.map((p) => [p.kind, p.path.at(-1)])).toEqual([
      ['count', 1000],
      ['length', 1002],
    ])
  })
})

describe('validateFirewall on the largest body (9,000 rules, about 1 MiB)', () => {
  const many = (count: number) =>
    Array.from({ length: count }, (_, i) => Rule.parse({ ...rule(byName([`p${i}-*`])), id: `r${i}` }))
  const config = (rules: Rule[]) => ({ ecosystem: 'npm' as const, upstreams: [], exceptions: [], extends: [], rules })

  it('takes turns with the rest of the process rule by rule, and refuses what it refused in one go', async () => {
    const slice = new CountingSlice()
    await validateFirewall(config(many(9000)), context(), slice)
    expect(slice.pauses).toBeGreaterThanOrEqual(9000)
    const rules = many(9000)
    rules[8999] = { ...rule(byName(['x'.repeat(215)])), id: 'long' } as Rule
    const refused = await validateFirewall(config(rules), context(), new CountingSlice()).catch((e: unknown) => e)
    expect((refused as DomainError).details.errors).toEqual([
      {
        path: 'rules[8999].selector.function.patterns[0]',
        message: 'a package-name pattern is at most 214 characters',
      },
    ])
  })
})
