import { describe, expect, it } from 'vitest'
import type { Decision } from '../../server/firewall/rules/evaluate'
import type { Packument } from '../../server/registry/npm/packument'
import { blockedVersions, pointAtNotices } from '../../server/registry/npm/notice-packument'

const decision = (outcome: Decision['outcome'], rule?: string): Decision => ({
  outcome,
  firewall: 'web',
  firewallVersion: 1,
  matches: [],
  message: outcome,
  ...(rule ? { rule: { id: rule } as Decision['rule'] } : {}),
})

const doc = (versions: string[]): Packument => ({
  name: 'pkg',
  'dist-tags': { latest: versions.at(-1)! },
  versions: Object.fromEntries(
    versions.map((version) => [
      version,
      {
        name: 'pkg',
        version,
        dist: { tarball: `https://fw/pkg/-/pkg-${version}.tgz`, integrity: `sha512-${version}` },
      },
    ]),
  ),
})

describe('blockedVersions', () => {
  it('names the rule of each blocked version; allowed, logged and exception-allowed versions are not blocked', async () => {
    const outcomes: Record<string, Decision> = {
      '1.0.0': decision('blocked', 'one'),
      '2.0.0': decision('allowed'),
      '3.0.0': decision('exception-allowed', 'one'),
      '4.0.0': decision('logged', 'audit'),
      '5.0.0': decision('blocked'),
    }
    const { blocked, every } = await blockedVersions(doc(Object.keys(outcomes)), (version) => outcomes[version])
    expect([...blocked]).toEqual([
      ['1.0.0', outcomes['1.0.0']],
      ['5.0.0', outcomes['5.0.0']],
    ])
    expect(every).toBe(false)
  })

  it('every version blocked, and each decided once', async () => {
    const asked: string[] = []
    const { blocked, every } = await blockedVersions(doc(['1.0.0', '2.0.0']), (version) => {
      asked.push(version)
      return decision('blocked', 'r')
    })
    expect(every).toBe(true)
    expect(blocked.size).toBe(2)
    expect(asked).toEqual(['1.0.0', '2.0.0'])
  })

  it('a built-in property name is an ordinary version', async () => {
    const { blocked } = await blockedVersions(doc(['constructor', '__proto__']), () => decision('blocked', 'r'))
    expect([...blocked.keys()].sort()).toEqual(['__proto__', 'constructor'])
  })
})

describe('pointAtNotices', () => {
  it('replaces only the tarball URL of blocked versions, keeping the rest of each manifest', async () => {
    const original = doc(['1.0.0', '2.0.0', '3.0.0'])
    const pointed = await pointAtNotices(
      original,
      new Map([
        ['1.0.0', decision('blocked', 'one')],
        ['3.0.0', decision('blocked')],
      ]),
      (version, rule) => `notice:${version}:${rule}`,
    )
    expect(pointed.versions!['1.0.0']).toEqual({
      name: 'pkg',
      version: '1.0.0',
      dist: { tarball: 'notice:1.0.0:one', integrity: 'sha512-1.0.0' },
    })
    expect(pointed.versions!['3.0.0'].dist?.tarball).toBe('notice:3.0.0:unknown')
    expect(pointed.versions!['2.0.0']).toBe(original.versions!['2.0.0'])
    expect(pointed['dist-tags']).toEqual(original['dist-tags'])
    // The rendered document is shared with the render cache: it is not changed.
    expect(original.versions!['1.0.0'].dist?.tarball).toBe('https://fw/pkg/-/pkg-1.0.0.tgz')
  })
})
