import { describe, expect, it } from 'vitest'
import type { Decision } from '../../server/firewall/rules/evaluate'
import type { Packument } from '../../server/registry/npm/packument'
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

/** A decide function that blocks all but `allowed`, and the versions it was asked about. */
function decider(allowed: string[] = []) {
  const asked: string[] = []
  const decide = (version: string) => {
    asked.push(version)
    return decision(allowed.includes(version) ? 'allowed' : 'blocked')
  }
  return { asked, decide }
}

describe('blockOfEveryVersion', () => {
  it('an allowed latest costs one decision and blocks nothing', async () => {
    const { asked, decide } = decider(['2.0.0'])
    expect(await blockOfEveryVersion(doc(['1.0.0', '2.0.0'], '2.0.0'), decide)).toBeNull()
    expect(asked).toEqual(['2.0.0'])
  })

  it('one allowed version among blocked ones blocks nothing', async () => {
    const { decide } = decider(['1.0.0'])
    expect(await blockOfEveryVersion(doc(['1.0.0', '2.0.0', '3.0.0'], '3.0.0'), decide)).toBeNull()
  })

  it('every version blocked: the block of latest, each version decided once', async () => {
    const { asked, decide } = decider()
    const block = await blockOfEveryVersion(doc(['1.0.0', '2.0.0', '3.0.0'], '2.0.0'), decide)
    expect(block?.version).toBe('2.0.0')
    expect(block?.decision.outcome).toBe('blocked')
    expect([...asked].sort()).toEqual(['1.0.0', '2.0.0', '3.0.0'])
  })

  it('without a latest tag, or with one naming no version, the first version is named', async () => {
    expect((await blockOfEveryVersion(doc(['1.0.0', '2.0.0']), decider().decide))?.version).toBe('1.0.0')
    expect((await blockOfEveryVersion(doc(['1.0.0'], '9.9.9'), decider().decide))?.version).toBe('1.0.0')
  })

  it('an exception-allowed or logged version is not blocked; no versions block nothing', async () => {
    expect(await blockOfEveryVersion(doc(['1.0.0'], '1.0.0'), () => decision('exception-allowed'))).toBeNull()
    expect(await blockOfEveryVersion(doc(['1.0.0'], '1.0.0'), () => decision('logged'))).toBeNull()
    expect(await blockOfEveryVersion(doc([]), decider().decide)).toBeNull()
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
