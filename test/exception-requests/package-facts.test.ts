import { describe, expect, it } from 'vitest'
import { ageOf, assemblePackageFacts, type PackageFactsInput } from '../../server/exception-requests/package-facts'
import type { AdvisoryMatches } from '../../server/advisories/types'

/** The facts panel's pure assembly: order, age, scripts, advisories, blocks by whom, and a failed upstream. */

const NOW = Date.parse('2026-11-26T12:00:00Z')
const NO_ADVISORIES: AdvisoryMatches = { vulnerabilities: [], malware: [] }

const input = (over: Partial<PackageFactsInput> = {}): PackageFactsInput => ({
  packageName: 'chalk',
  version: '5.3.0',
  now: NOW,
  upstream: {
    kind: 'found',
    upstream: 'npmjs',
    latest: '5.3.0',
    versions: [
      { ecosystem: 'npm', packageName: 'chalk', version: '4.1.2', published: '2021-07-30T12:00:00Z', license: 'MIT' },
      {
        ecosystem: 'npm',
        packageName: 'chalk',
        version: '5.3.0',
        published: '2026-11-23T11:00:00Z',
        license: 'MIT',
        scripts: { postinstall: 'node x.js', test: 'vitest' },
      },
      { ecosystem: 'npm', packageName: 'chalk', version: '5.0.0', published: '2021-11-26T12:00:00Z' },
    ],
  },
  advisoriesOf: () => NO_ADVISORIES,
  blocks: [],
  windowDays: 30,
  otherPending: [],
  ...over,
})

describe('ageOf', () => {
  it('names the largest whole unit', () => {
    expect(ageOf('2026-11-23T11:00:00Z', NOW)).toBe('3 days')
    expect(ageOf('2025-11-26T11:00:00Z', NOW)).toBe('1 year')
    expect(ageOf('2026-11-26T11:59:30Z', NOW)).toBe('less than a minute')
    expect(ageOf('not a date', NOW)).toBeUndefined()
  })
})

describe('assemblePackageFacts', () => {
  it('lists versions newest first with age, license and install scripts, and marks the requested one', () => {
    const facts = assemblePackageFacts(input())
    expect(facts.versions.map((v) => v.version)).toEqual(['5.3.0', '5.0.0', '4.1.2'])
    expect(facts.requested).toMatchObject({
      version: '5.3.0',
      age: '3 days',
      license: 'MIT',
      installScripts: ['postinstall'],
      latest: true,
      advisories: [],
    })
    expect(facts.versions[1]).toMatchObject({ version: '5.0.0', age: '5 years', installScripts: [] })
    expect(facts.versions[1].license).toBeUndefined()
    expect(facts.upstream).toEqual({ state: 'found', upstream: 'npmjs' })
  })

  it('keeps the requested version among a long list, and says when advisory data cannot be read', () => {
    const versions = Array.from({ length: 30 }, (_, i) => ({
      ecosystem: 'npm' as const,
      packageName: 'chalk',
      version: `1.0.${i}`,
      published: new Date(NOW - (30 - i) * 86_400_000).toISOString(),
    }))
    const facts = assemblePackageFacts(
      input({
        version: '1.0.0',
        upstream: { kind: 'found', upstream: 'npmjs', versions },
        advisoriesOf: () => {
          throw new Error('advisory data for npm is not loaded yet')
        },
      }),
    )
    expect(facts.totalVersions).toBe(30)
    expect(facts.versions).toHaveLength(16)
    expect(facts.versions[0].version).toBe('1.0.29')
    expect(facts.versions.at(-1)).toMatchObject({ version: '1.0.0', requested: true, advisories: undefined })
  })

  it('names advisories, malware first', () => {
    const facts = assemblePackageFacts(
      input({
        advisoriesOf: (version) =>
          version === '5.3.0'
            ? {
                vulnerabilities: [
                  { id: 'GHSA-1', aliases: [], malware: false, severity: 'high', summary: 'bad', affected: [] },
                ],
                malware: [{ id: 'MAL-1', aliases: [], malware: true, affected: [] }],
              }
            : NO_ADVISORIES,
      }),
    )
    expect(facts.requested?.advisories).toEqual([
      { id: 'MAL-1', kind: 'malware' },
      { id: 'GHSA-1', kind: 'vulnerability', severity: 'high', summary: 'bad' },
    ])
  })

  it('counts blocks by whom, most first, and orders other pending requests oldest first', () => {
    const facts = assemblePackageFacts(
      input({
        blocks: [
          { user: 'bob', version: '5.3.0', time: '2026-11-20T00:00:00Z' },
          { user: 'alice', version: '5.3.0', time: '2026-11-21T00:00:00Z' },
          { user: 'bob', version: '5.0.0', time: '2026-11-25T00:00:00Z' },
        ],
        otherPending: [
          { id: 'exr-2', requestedBy: 'carol', rule: 'r', requestedAt: '2026-11-25T00:00:00Z' },
          { id: 'exr-1', requestedBy: 'dave', rule: 'r', version: '5.3.0', requestedAt: '2026-11-24T00:00:00Z' },
        ],
      }),
    )
    expect(facts.blocks).toEqual({
      windowDays: 30,
      total: 3,
      byUser: [
        { user: 'bob', count: 2, last: '2026-11-25T00:00:00Z' },
        { user: 'alice', count: 1, last: '2026-11-21T00:00:00Z' },
      ],
    })
    expect(facts.otherPending.map((p) => p.id)).toEqual(['exr-1', 'exr-2'])
  })

  it('degrades to what the firewall knows when the upstream could not be reached', () => {
    const facts = assemblePackageFacts(
      input({
        upstream: { kind: 'unreachable', reason: 'no answer within 4000 ms' },
        blocks: [{ user: 'bob', version: '5.3.0', time: '2026-11-20T00:00:00Z' }],
      }),
    )
    expect(facts.upstream).toEqual({ state: 'unreachable', reason: 'no answer within 4000 ms' })
    expect(facts.versions).toEqual([])
    expect(facts.requested).toBeUndefined()
    expect(facts.blocks.total).toBe(1)
  })
})
