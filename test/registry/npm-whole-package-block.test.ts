import { describe, expect, it } from 'vitest'
import type { Decision } from '../../server/firewall/rules/evaluate'
import type { Packument } from '../../server/registry/npm/packument'
import { blockedVersions } from '../../server/registry/npm/notice-packument'
import { blockOfEveryVersion, refusesBlockedPackument } from '../../server/registry/npm/whole-package-block'

const decision = (outcome: Decision['outcome']): Decision => ({
  outcome,
  firewall: 'web',
  firewallVersion: 1,
  matches: [],
  message: outcome,
})

const doc = (versions: string[], latest?: string): Packument => ({
  name: 'pkg',
  'dist-tags': latest ? { latest } : {},
  versions: Object.fromEntries(versions.map((version) => [version, { name: 'pkg', version }])),
})

/** The blocked versions when all but `allowed` are blocked. */
const blocking = (packument: Packument, allowed: string[] = []) =>
  blockedVersions(packument, (version) => decision(allowed.includes(version) ? 'allowed' : 'blocked'))

describe('blockOfEveryVersion', () => {
  it('an allowed version among blocked ones blocks nothing', async () => {
    const packument = doc(['1.0.0', '2.0.0', '3.0.0'], '3.0.0')
    expect(blockOfEveryVersion(packument, await blocking(packument, ['1.0.0']))).toBeNull()
    expect(blockOfEveryVersion(packument, await blocking(packument, ['3.0.0']))).toBeNull()
  })

  it('every version blocked: the block of latest', async () => {
    const packument = doc(['1.0.0', '2.0.0', '3.0.0'], '2.0.0')
    const block = blockOfEveryVersion(packument, await blocking(packument))
    expect(block?.version).toBe('2.0.0')
    expect(block?.manifest).toBe(packument.versions!['2.0.0'])
    expect(block?.decision.outcome).toBe('blocked')
  })

  it('without a latest tag, or with one naming no version, the first version is named', async () => {
    const untagged = doc(['1.0.0', '2.0.0'])
    expect(blockOfEveryVersion(untagged, await blocking(untagged))?.version).toBe('1.0.0')
    const dangling = doc(['1.0.0'], '9.9.9')
    expect(blockOfEveryVersion(dangling, await blocking(dangling))?.version).toBe('1.0.0')
  })

  it('an exception-allowed or logged version is not blocked; no versions block nothing', async () => {
    const one = doc(['1.0.0'], '1.0.0')
    for (const outcome of ['exception-allowed', 'logged'] as const)
      expect(blockOfEveryVersion(one, await blockedVersions(one, () => decision(outcome)))).toBeNull()
    const none = doc([])
    expect(blockOfEveryVersion(none, await blocking(none))).toBeNull()
  })
})

describe('refusesBlockedPackument', () => {
  it('pnpm 12 and later only', () => {
    const by = (userAgent?: string) => refusesBlockedPackument(userAgent ? { 'user-agent': userAgent } : {})
    expect(by('pnpm/12.21.0 npm/? node/? linux x64')).toBe(true)
    expect(by('pnpm/13.0.0 npm/? node/? linux x64')).toBe(true)
    expect(by('pnpm/11.9.0 npm/? node/v22.0.0 linux x64')).toBe(false)
    expect(by('pnpm/9.15.0 npm/? node/v20.19.0 linux x64')).toBe(false)
    expect(by('npm/10.9.2 node/v20.19.0 linux x64 workspaces/false')).toBe(false)
    expect(by('Bun/1.4.5')).toBe(false)
    expect(by()).toBe(false)
  })
})
