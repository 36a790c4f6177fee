import { describe, expect, it } from 'vitest'
import * as reference from '@renovatebot/pep440'
import { inVersionRange, rangeProblem, sameVersion, versionOrdering } from '../../server/firewall/rules/versions'

/**
 * PyPI's ordering (@renovatebot/pep440 behind `versionOrdering('pypi')`) on PyPI's own tricky
 * cases: the ordering table of pypa/packaging's test suite and the specification's
 * normalisation rules. The ordering also accepts the surrounding whitespace the specification
 * allows (the library alone does not); the library's specifiers (`~=`, `===`, `==1.*`) are
 * syntax our `versionRange` does not take (the contract's ranges are semver syntax).
 */

const BASE = [
  '1.0.dev456',
  '1.0a1',
  '1.0a2.dev456',
  '1.0a12.dev456',
  '1.0a12',
  '1.0b1.dev456',
  '1.0b2',
  '1.0b2.post345.dev456',
  '1.0b2.post345',
  '1.0b2-346',
  '1.0c1.dev456',
  '1.0c1',
  '1.0rc2',
  '1.0c3',
  '1.0',
  '1.0.post456.dev34',
  '1.0.post456',
  '1.1.dev1',
  '1.2+123abc',
  '1.2+123abc456',
  '1.2+abc',
  '1.2+abc123',
  '1.2+abc123def',
  '1.2+1234.abc',
  '1.2+123456',
  '1.2.r32+123456',
  '1.2.rev33+123456',
]
/** Strictly ascending: implicit epoch 0, then the same with epoch 1. */
const ASCENDING = [...BASE, ...BASE.map((v) => `1!${v}`)]

const ours = (a: string, b: string) => Math.sign(versionOrdering('pypi').compare(a, b))

const SAME: [string, string][] = [
  ['1.0a1', '1.0.0a1'],
  ['1.0alpha1', '1.0a1'],
  ['1.0.b2', '1.0b2'],
  ['1.0a.1', '1.0a1'],
  ['1.0_a_1', '1.0a1'],
  ['1.0c1', '1.0rc1'],
  ['1.0pre1', '1.0rc1'],
  ['1.0preview1', '1.0rc1'],
  ['1.0RC1', '1.0rc1'],
  ['1.0-1', '1.0.post1'],
  ['1.0-rev4', '1.0.post4'],
  ['1.0.r', '1.0.post0'],
  ['1.0.post', '1.0.post0'],
  ['1.0-post-1', '1.0.post1'],
  ['1.0.dev', '1.0.dev0'],
  ['1.0-dev1', '1.0.dev1'],
  ['1.0+ubuntu-1', '1.0+ubuntu.1'],
  ['1.0+UbuNtu', '1.0+ubuntu'],
  ['1.0+01', '1.0+1'],
  ['v1.0', '1.0'],
  ['01.0', '1.0'],
  ['1.0', '1.0.0.0'],
  ['0!1.0', '1.0'],
  ['1!1.0', '1!1.0.0'],
]

const INVALID = [
  '1.0+',
  '1.0.',
  'french toast',
  '1.0+a_b_',
  '1!',
  '1.0-',
  '1.0 dev',
  '1.0+_foo',
  '1.0++',
  '1.0a1a2',
  '1.0.post1.post2',
  '1.0.dev1.dev2',
  '',
  'a1.0',
  '1.0.devx',
]

describe("PEP 440 on PyPI's own cases", () => {
  it("orders packaging's table: epochs, dev < pre < release < post, dev of a post, local labels", () => {
    for (const [i, a] of ASCENDING.entries()) {
      for (const [j, b] of ASCENDING.entries()) {
        expect(ours(a, b), `${a} vs ${b}`).toBe(Math.sign(i - j))
      }
    }
  })

  it.each(SAME)('normalises %s to the same version as %s', (a, b) => {
    expect(sameVersion('pypi', a, b)).toBe(true)
  })

  it('accepts the whitespace around a version the specification allows (the library alone does not)', () => {
    expect(sameVersion('pypi', '  1.0\t', '1.0')).toBe(true)
    expect(reference.valid('  1.0\t')).toBeNull()
  })

  it.each(INVALID)('refuses %j', (text) => {
    expect(versionOrdering('pypi').valid(text)).toBe(false)
  })

  it('counts dev releases as pre-releases, post releases not', () => {
    const { prerelease } = versionOrdering('pypi')
    expect(['1.0.dev1', '1.0a1', '1.0rc1.post1', '1.0.post1.dev2'].map(prerelease)).toEqual([true, true, true, true])
    expect(['1.0', '1.0.post1', '1.0+local'].map(prerelease)).toEqual([false, false, false])
  })

  it('ranges use the semver comparators under PEP 440 ordering; PEP 440 specifiers are refused with a reason', () => {
    expect(inVersionRange('pypi', '1.0.0a1', '>=1.0a1 <1.0', true)).toBe(true)
    expect(inVersionRange('pypi', '1.0a1', '>=1.0a1 <1.0', false)).toBe(false)
    expect(inVersionRange('pypi', '1!0.1', '>=2.0', false)).toBe(true)
    for (const specifier of ['~=2.2', '===1.0', '==1.*', '!=1.0', '>=1.0,<2.0'])
      expect(rangeProblem('pypi', specifier)).not.toBeNull()
  })
})
