import { describe, expect, it } from 'vitest'
import {
  compareMaven,
  inVersionRange,
  normalizeNuGet,
  rangeProblem,
  sameVersion,
  versionOrdering,
} from '../../server/firewall/rules/versions'
import { firewallValidationContext, validateFirewall } from '../../server/firewall/validation'
import { startProxy } from '../registry/harness'

const sorted = (ecosystem: 'pypi' | 'maven' | 'nuget', versions: string[]) =>
  [...versions].sort(versionOrdering(ecosystem).compare)

describe('PEP 440 ordering', () => {
  it('orders dev < pre < release < post, epochs first', () => {
    expect(sorted('pypi', ['1.0.post1', '1.0', '1.0rc1', '1.0.dev1', '1.0a1', '1!0.1', '1.0b2', '1.0+local'])).toEqual([
      '1.0.dev1',
      '1.0a1',
      '1.0b2',
      '1.0rc1',
      '1.0',
      '1.0+local',
      '1.0.post1',
      '1!0.1',
    ])
  })

  it('treats normalised spellings as the same version', () => {
    expect(sameVersion('pypi', '1.0', '1.0.0')).toBe(true)
    expect(sameVersion('pypi', '1.0-RC.1', '1.0rc1')).toBe(true)
    expect(versionOrdering('pypi').valid('not a version')).toBe(false)
  })
})

describe('Maven ComparableVersion ordering', () => {
  it('orders qualifiers alpha < beta < milestone < rc < snapshot < release < sp', () => {
    expect(
      sorted('maven', ['1.0-sp1', '1.0', '1.0-SNAPSHOT', '1.0-rc1', '1.0-m1', '1.0-beta-2', '1.0-alpha-1']),
    ).toEqual(['1.0-alpha-1', '1.0-beta-2', '1.0-m1', '1.0-rc1', '1.0-SNAPSHOT', '1.0', '1.0-sp1'])
  })

  it('ignores trailing zeros and aliases ga/final', () => {
    expect(compareMaven('1.0.0', '1')).toBe(0)
    expect(compareMaven('1.0-final', '1.0')).toBe(0)
    expect(compareMaven('1.10', '1.9')).toBe(1)
  })
})

describe('NuGet ordering', () => {
  it('orders pre-releases before releases, labels numerically and case-insensitively', () => {
    expect(sorted('nuget', ['1.0.0', '1.0.0-beta.10', '1.0.0-beta.2', '1.0.0-Alpha', '1.0.0.1'])).toEqual([
      '1.0.0-Alpha',
      '1.0.0-beta.2',
      '1.0.0-beta.10',
      '1.0.0',
      '1.0.0.1',
    ])
  })

  it('normalises as flat-container paths need', () => {
    expect(normalizeNuGet('1.0.0.0+build')).toBe('1.0.0')
    expect(normalizeNuGet('01.2')).toBe('1.2.0')
  })
})

describe('version ranges outside npm', () => {
  it('compares bounds with the ecosystem ordering, pre-releases in for rules and out for exceptions', () => {
    expect(inVersionRange('pypi', '1.5rc1', '>=1.0 <2.0', true)).toBe(true)
    expect(inVersionRange('pypi', '1.5rc1', '>=1.0 <2.0', false)).toBe(false)
    expect(inVersionRange('maven', '2.0-beta-1', '<2.0', true)).toBe(true)
    expect(inVersionRange('nuget', '3.0.0', '<2.0.0 || =3.0.0', true)).toBe(true)
  })

  it('refuses semver-only and foreign range syntax with a reason', () => {
    expect(rangeProblem('pypi', '^1.0')).toContain('not supported for pypi')
    expect(rangeProblem('maven', '1.x')).toContain('not supported')
    expect(rangeProblem('nuget', '>=banana')).toContain('not a nuget version')
    expect(rangeProblem('pypi', '>=1.0 <2.0')).toBeNull()
  })
})

describe('saving a rule that cannot apply to the firewall ecosystem', () => {
  it('is rejected with the rule path and the reason', async () => {
    const proxy = await startProxy()
    try {
      const rules = [
        {
          id: 'scripts',
          executionPhase: 'download',
          selector: { function: { name: 'installScripts' } },
          ruleEffect: { block: true, log: true },
          description: '',
        },
        {
          id: 'caret',
          executionPhase: 'download',
          selector: { function: { name: 'versionRange', package: 'x', range: '^1.0.0' } },
          ruleEffect: { block: true, log: true },
          description: '',
        },
      ] as const
      const validate = async (id: string, ecosystem: 'pypi' | 'npm') => {
        const context = await firewallValidationContext(proxy.services, proxy.ns, {
          id,
          previous: null,
          readable: () => true,
          rules: 'all',
        })
        await validateFirewall({ ecosystem, upstreams: [], rules: [...rules], exceptions: [], extends: [] }, context)
      }
      const error = await validate('py', 'pypi').catch((e: Error) => e)
      expect(error).toBeInstanceOf(Error)
      expect((error as Error).message).toContain(
        'rules[0].selector: installScripts applies to npm packages only (firewall ecosystem pypi)',
      )
      expect((error as Error).message).toContain(
        'rules[1].selector: versionRange ^1.0.0: "^1.0.0" is not supported for pypi',
      )
      await expect(validate('np', 'npm')).resolves.toBeUndefined()
    } finally {
      await proxy.close()
    }
  })
})
