import { describe, expect, it } from 'vitest'
import { exceptionApplies, exceptionSelectorMatches, isExceptionActive } from '../../server/firewall/rules/exceptions'
import { exception, facts, NOW } from './fixtures'

describe('isExceptionActive', () => {
  it('is active without an expiry', () => {
    expect(isExceptionActive(exception('e', 'r', { packageName: 'left-pad' }), NOW)).toBe(true)
  })

  it('is active before its expiry', () => {
    expect(
      isExceptionActive(exception('e', 'r', { packageName: 'left-pad' }, { expires: '2025-06-02T00:00:00Z' }), NOW),
    ).toBe(true)
  })

  it('is inactive at its expiry', () => {
    const e = exception('e', 'r', { packageName: 'left-pad' }, { expires: '2025-06-01T00:00:00Z' })
    expect(isExceptionActive(e, NOW)).toBe(false)
  })

  it('honours a timezone offset in the expiry', () => {
    const e = exception('e', 'r', { packageName: 'left-pad' }, { expires: '2025-06-01T01:00:00+02:00' })
    expect(isExceptionActive(e, NOW)).toBe(false)
  })
})

describe('exceptionSelectorMatches', () => {
  it('covers every version when version is omitted', () => {
    expect(
      exceptionSelectorMatches(exception('e', 'r', { packageName: 'left-pad' }), facts({ version: '9.9.9' })),
    ).toBe(true)
  })

  it('covers the exact version', () => {
    expect(exceptionSelectorMatches(exception('e', 'r', { packageName: 'left-pad', version: '1.3.0' }), facts())).toBe(
      true,
    )
  })

  it('does not cover another exact version', () => {
    expect(exceptionSelectorMatches(exception('e', 'r', { packageName: 'left-pad', version: '1.3.1' }), facts())).toBe(
      false,
    )
  })

  it('covers versions in a semver range', () => {
    expect(exceptionSelectorMatches(exception('e', 'r', { packageName: 'left-pad', version: '^1.2.0' }), facts())).toBe(
      true,
    )
  })

  it('leaves prereleases outside a semver range', () => {
    const e = exception('e', 'r', { packageName: 'left-pad', version: '^1.2.0' })
    expect(exceptionSelectorMatches(e, facts({ version: '1.4.0-rc.1' }))).toBe(false)
  })

  it('does not cover another package', () => {
    expect(exceptionSelectorMatches(exception('e', 'r', { packageName: 'right-pad' }), facts())).toBe(false)
  })

  it('accepts a name glob', () => {
    expect(
      exceptionSelectorMatches(exception('e', 'r', { packageName: '@acme/*' }), facts({ packageName: '@acme/ui' })),
    ).toBe(true)
  })
})

describe('exceptionApplies', () => {
  it('applies only to its own rule', () => {
    expect(exceptionApplies(exception('e', 'r1', { packageName: 'left-pad' }), 'r2', facts(), NOW)).toBe(false)
  })

  it('applies to its rule when active and matching', () => {
    expect(exceptionApplies(exception('e', 'r1', { packageName: 'left-pad' }), 'r1', facts(), NOW)).toBe(true)
  })
})
