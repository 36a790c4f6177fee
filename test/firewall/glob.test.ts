import { describe, expect, it } from 'vitest'
import { GLOB_CACHE_PATTERNS, globCacheSize, matchesGlob } from '../../server/firewall/rules/glob'
import { normalizePackageName } from '../../server/firewall/rules/names'

describe('matchesGlob', () => {
  it('matches a literal name exactly', () => {
    expect(matchesGlob('lodash', 'lodash')).toBe(true)
  })

  it('does not match a literal name as a prefix', () => {
    expect(matchesGlob('lodash', 'lodash.get')).toBe(false)
  })

  it('matches every package of a scope with @scope/*', () => {
    expect(matchesGlob('@acme/*', '@acme/widgets')).toBe(true)
  })

  it('does not match another scope with @scope/*', () => {
    expect(matchesGlob('@acme/*', '@acmex/widgets')).toBe(false)
  })

  it('matches scoped names with a bare *', () => {
    expect(matchesGlob('*', '@acme/widgets')).toBe(true)
  })

  it('treats regex metacharacters literally', () => {
    expect(matchesGlob('a.b', 'axb')).toBe(false)
  })

  it('matches a single character with ?', () => {
    expect(matchesGlob('left-pa?', 'left-pad')).toBe(true)
  })

  it('matches a suffix pattern', () => {
    expect(matchesGlob('*-plugin', 'eslint-plugin')).toBe(true)
  })
})

describe('normalizePackageName', () => {
  it('normalizes PyPI names per PEP 503', () => {
    expect(normalizePackageName('pypi', 'Django_Rest.Framework')).toBe('django-rest-framework')
  })

  it('lower-cases NuGet ids', () => {
    expect(normalizePackageName('nuget', 'Newtonsoft.Json')).toBe('newtonsoft.json')
  })

  it('keeps npm names as they are', () => {
    expect(normalizePackageName('npm', 'JSONStream')).toBe('JSONStream')
  })
})

describe('glob pattern cache (#30)', () => {
  it('keeps at most its bound of cut patterns, however many distinct patterns are matched', () => {
    for (let i = 0; i < GLOB_CACHE_PATTERNS + 500; i++) matchesGlob(`pkg-${i}-*`, 'pkg-1-x')
    expect(globCacheSize()).toBeLessThanOrEqual(GLOB_CACHE_PATTERNS)
  })
})
