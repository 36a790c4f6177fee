import { describe, expect, it } from 'vitest'
import { DomainError } from '../../server/common/errors'
import { Rule } from '../../server/firewall/schema'
import { MAX_SELECTOR_DEPTH, selectorDepth } from '../../server/firewall/rules/selector-depth'

/** `not(not(...(deprecated)))` with `levels` selectors in all. */
function nested(levels: number): unknown {
  let selector: unknown = { function: { name: 'deprecated' } }
  for (let i = 1; i < levels; i++) selector = { function: { name: 'not', selector } }
  return selector
}
const rule = (selector: unknown) => ({ id: 'r', executionPhase: 'download', selector })

function refusal(run: () => unknown): DomainError {
  try {
    run()
  } catch (error) {
    if (error instanceof DomainError) return error
    throw error
  }
  throw new Error('not refused')
}

describe('selector depth (CONTRACT section 8: at most 16 deep)', () => {
  it('counts levels without recursion, across all/any/not', () => {
    expect(selectorDepth(nested(1))).toBe(1)
    expect(selectorDepth({ function: { name: 'all', selectors: [nested(3), nested(5)] } })).toBe(6)
    // 100,000 levels would overflow any recursive walk; the count stops just past the bound.
    expect(selectorDepth(nested(100_000))).toBe(MAX_SELECTOR_DEPTH + 1)
  })

  it('accepts a rule whose selector nests 16 deep', () => {
    expect(Rule.parse(rule(nested(MAX_SELECTOR_DEPTH))).selector.function.name).toBe('not')
  })

  it('refuses 17 deep, and 1,000 deep, with selector_too_deep before the schema recurses', () => {
    for (const levels of [MAX_SELECTOR_DEPTH + 1, 1_000, 100_000]) {
      const error = refusal(() => Rule.safeParse(rule(nested(levels))))
      expect(error.code).toBe('selector_too_deep')
      expect(error.details.errors).toEqual([{ path: 'selector', message: expect.stringContaining('at most 16 deep') }])
    }
  })

  it('counts a deep branch inside any as deep', () => {
    const selector = { function: { name: 'any', selectors: [nested(1), nested(MAX_SELECTOR_DEPTH)] } }
    expect(refusal(() => Rule.parse(rule(selector))).code).toBe('selector_too_deep')
  })
})
