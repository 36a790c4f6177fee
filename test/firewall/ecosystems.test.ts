import { describe, expect, it } from 'vitest'
import { ecosystemForOsvName, ecosystemProfile, ecosystemsWith } from '../../server/firewall/ecosystems'
import { ECOSYSTEMS } from '../../server/firewall/schema'
import { ecosystemProtocol } from '../../server/registry/ecosystems'

describe('ecosystem registry', () => {
  it('gives every ecosystem a profile whose OSV name maps back to it', () => {
    for (const ecosystem of ECOSYSTEMS) {
      expect(ecosystemForOsvName(ecosystemProfile(ecosystem).osvName)).toBe(ecosystem)
    }
    expect(ecosystemForOsvName('crates.io')).toBeUndefined()
  })

  it('gives every ecosystem a protocol handler carrying its profile', () => {
    for (const ecosystem of ECOSYSTEMS) {
      const protocol = ecosystemProtocol(ecosystem)
      expect(typeof protocol.handle).toBe('function')
      expect(protocol.ordering).toBe(ecosystemProfile(ecosystem).ordering)
    }
    // npm prints the JSON body, yarn and pnpm only the status line of a download; pip, Maven and
    // NuGet print the status line.
    const phrased = (method: string, userAgent: string) =>
      ECOSYSTEMS.filter((e) => ecosystemProtocol(e).reasonPhrase(method, { 'user-agent': userAgent }))
    expect(phrased('GET', 'npm/11.19.1 node/v20.20.2 linux x64')).toEqual(['pypi', 'maven', 'nuget'])
    expect(phrased('GET', 'got (https://github.com/sindresorhus/got)')).toEqual(['npm', 'pypi', 'maven', 'nuget'])
    expect(phrased('PUT', 'got (https://github.com/sindresorhus/got)')).toEqual(['pypi', 'maven', 'nuget'])
  })

  it('names the ecosystems that supply npm-only facts', () => {
    expect(ecosystemsWith('deprecated')).toEqual(['npm'])
    expect(ecosystemsWith('installScripts')).toEqual(['npm'])
    expect(ECOSYSTEMS.filter((e) => ecosystemProfile(e).facts.license === null)).toEqual(['maven'])
  })
})
