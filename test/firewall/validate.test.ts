import { describe, expect, it } from 'vitest'
import { collectLicenseSetIds, validateRuleForEcosystem } from '../../server/firewall/rules/validate'
import { rule, sel } from './fixtures'

describe('validateRuleForEcosystem', () => {
  it('accepts every selector for npm', () => {
    const everything = rule(
      'r',
      sel.all(sel.installScripts(), sel.deprecated(), sel.license('oss', 'allow'), sel.range('a', '1.x')),
    )
    expect(validateRuleForEcosystem(everything, 'npm')).toEqual([])
  })

  it('rejects installScripts outside npm, naming where', () => {
    expect(validateRuleForEcosystem(rule('r', sel.any(sel.malware(), sel.installScripts())), 'pypi')).toEqual([
      {
        level: 'error',
        path: 'selector.function.selectors[1]',
        message: 'installScripts applies to npm packages only',
      },
    ])
  })

  it('rejects deprecated outside npm', () => {
    expect(validateRuleForEcosystem(rule('r', sel.deprecated()), 'nuget')[0].level).toBe('error')
  })

  it('rejects license for maven', () => {
    expect(validateRuleForEcosystem(rule('r', sel.not(sel.license('oss', 'deny'))), 'maven')[0]).toMatchObject({
      level: 'error',
      path: 'selector.function.selector',
    })
  })

  it('accepts license for pypi and nuget', () => {
    expect([
      validateRuleForEcosystem(rule('r', sel.license('oss', 'allow')), 'pypi'),
      validateRuleForEcosystem(rule('r', sel.license('oss', 'allow')), 'nuget'),
    ]).toEqual([[], []])
  })

  it('rejects semver-only range syntax outside npm', () => {
    expect(validateRuleForEcosystem(rule('r', sel.range('a', '1.x')), 'maven')[0].level).toBe('error')
  })

  it('warns about minimumAge for maven', () => {
    expect(validateRuleForEcosystem(rule('r', sel.age('7d')), 'maven')[0].level).toBe('warning')
  })
})

describe('collectLicenseSetIds', () => {
  it('collects nested license sets once each', () => {
    const selector = sel.any(
      sel.license('oss', 'allow'),
      sel.not(sel.license('copyleft', 'deny')),
      sel.license('oss', 'allow'),
    )
    expect(collectLicenseSetIds(selector)).toEqual(['oss', 'copyleft'])
  })

  it('returns nothing for a selector without license functions', () => {
    expect(collectLicenseSetIds(sel.malware())).toEqual([])
  })
})
