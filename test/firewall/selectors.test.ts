import { describe, expect, it } from 'vitest'
import { matchSelector } from '../../server/firewall/rules/selectors'
import { context, facts, NOW, osvRecord, sel } from './fixtures'

const HOUR = 3_600_000
const ctx = context()
const iso = (ms: number) => new Date(ms).toISOString()

describe('packageName', () => {
  it('matches a listed name', () => {
    expect(matchSelector(sel.name('left-pad'), facts(), ctx).matched).toBe(true)
  })

  it('matches a scope glob', () => {
    expect(matchSelector(sel.name('@acme/*'), facts({ packageName: '@acme/ui' }), ctx).matched).toBe(true)
  })

  it('does not match an unlisted name', () => {
    expect(matchSelector(sel.name('right-pad', '@acme/*'), facts(), ctx).matched).toBe(false)
  })

  it('compares PyPI names after normalization', () => {
    expect(
      matchSelector(sel.name('Requests_OAuth'), facts({ ecosystem: 'pypi', packageName: 'requests-oauth' }), ctx)
        .matched,
    ).toBe(true)
  })
})

describe('versionRange', () => {
  it('matches a version inside the range', () => {
    expect(matchSelector(sel.range('left-pad', '<1.3.1'), facts(), ctx).matched).toBe(true)
  })

  it('does not match a version outside the range', () => {
    expect(matchSelector(sel.range('left-pad', '>=2'), facts(), ctx).matched).toBe(false)
  })

  it('does not match another package', () => {
    expect(matchSelector(sel.range('right-pad', '*'), facts(), ctx).matched).toBe(false)
  })

  it('leaves prereleases outside a plain range', () => {
    expect(matchSelector(sel.range('left-pad', '<2.0.0'), facts({ version: '1.4.0-beta.1' }), ctx).matched).toBe(false)
  })

  it('never matches a non-semver version', () => {
    expect(matchSelector(sel.range('left-pad', '*'), facts({ version: '2024.1' }), ctx).matched).toBe(false)
  })
})

describe('minimumAge', () => {
  it('matches a version published more recently than the duration', () => {
    expect(matchSelector(sel.age('72h'), facts({ published: iso(NOW - 2 * HOUR) }), ctx).matched).toBe(true)
  })

  it('does not match a version older than the duration', () => {
    expect(matchSelector(sel.age('7d'), facts({ published: iso(NOW - 8 * 24 * HOUR) }), ctx).matched).toBe(false)
  })

  it('stops matching exactly at the duration', () => {
    expect(matchSelector(sel.age('72h'), facts({ published: iso(NOW - 72 * HOUR) }), ctx).matched).toBe(false)
  })

  it('uses the injected clock', () => {
    const published = iso(NOW - 2 * HOUR)
    expect(matchSelector(sel.age('72h'), facts({ published }), context({ now: NOW + 100 * HOUR })).matched).toBe(false)
  })

  it('treats an unknown publish time as too new (fail closed)', () => {
    expect(matchSelector(sel.age('72h'), facts(), ctx).matched).toBe(true)
  })

  it('treats an unparseable publish time as too new', () => {
    expect(matchSelector(sel.age('72h'), facts({ published: 'yesterday' }), ctx).matched).toBe(true)
  })
})

describe('license', () => {
  it('allow mode does not match a license in the set', () => {
    expect(matchSelector(sel.license('permissive', 'allow'), facts({ license: 'MIT' }), ctx).matched).toBe(false)
  })

  it('allow mode matches a license outside the set', () => {
    expect(matchSelector(sel.license('permissive', 'allow'), facts({ license: 'GPL-3.0-only' }), ctx).matched).toBe(
      true,
    )
  })

  it('allow mode accepts an OR expression with one allowed choice', () => {
    expect(
      matchSelector(sel.license('permissive', 'allow'), facts({ license: '(GPL-3.0-only OR MIT)' }), ctx).matched,
    ).toBe(false)
  })

  it('allow mode rejects an AND expression with one disallowed part', () => {
    expect(
      matchSelector(sel.license('permissive', 'allow'), facts({ license: 'MIT AND GPL-3.0-only' }), ctx).matched,
    ).toBe(true)
  })

  it('allow mode matches a missing license', () => {
    expect(matchSelector(sel.license('permissive', 'allow'), facts(), ctx).matched).toBe(true)
  })

  it('allow mode matches a license that is not SPDX', () => {
    expect(
      matchSelector(sel.license('permissive', 'allow'), facts({ license: 'SEE LICENSE IN LICENSE.md' }), ctx).matched,
    ).toBe(true)
  })

  it('allow mode matches everything when the license set is unknown', () => {
    expect(matchSelector(sel.license('nope', 'allow'), facts({ license: 'MIT' }), ctx).matched).toBe(true)
  })

  it('deny mode matches a license in the set', () => {
    const deny = context({ licenseSets: new Map([['copyleft', ['GPL-3.0-only', 'AGPL-3.0-only']]]) })
    expect(matchSelector(sel.license('copyleft', 'deny'), facts({ license: 'GPL-3.0-only' }), deny).matched).toBe(true)
  })

  it('deny mode does not match a license outside the set', () => {
    const deny = context({ licenseSets: new Map([['copyleft', ['GPL-3.0-only']]]) })
    expect(matchSelector(sel.license('copyleft', 'deny'), facts({ license: 'MIT' }), deny).matched).toBe(false)
  })

  it('deny mode does not match a missing license', () => {
    const deny = context({ licenseSets: new Map([['copyleft', ['GPL-3.0-only']]]) })
    expect(matchSelector(sel.license('copyleft', 'deny'), facts(), deny).matched).toBe(false)
  })

  it('skips invalid entries of a license set instead of rejecting everything', () => {
    const sets = context({ licenseSets: new Map([['mixed', ['not a license', 'MIT']]]) })
    expect(matchSelector(sel.license('mixed', 'allow'), facts({ license: 'MIT' }), sets).matched).toBe(false)
  })
})

describe('deprecated', () => {
  it('matches a deprecation message', () => {
    expect(matchSelector(sel.deprecated(), facts({ deprecated: 'use right-pad' }), ctx)).toMatchObject({
      matched: true,
      message: 'deprecated: use right-pad',
    })
  })

  it('does not match an empty deprecation message (npm undeprecate)', () => {
    expect(matchSelector(sel.deprecated(), facts({ deprecated: '' }), ctx).matched).toBe(false)
  })

  it('does not match a version without deprecation', () => {
    expect(matchSelector(sel.deprecated(), facts(), ctx).matched).toBe(false)
  })
})

describe('installScripts', () => {
  it('matches a postinstall script', () => {
    expect(matchSelector(sel.installScripts(), facts({ scripts: { postinstall: 'node x.js' } }), ctx)).toMatchObject({
      matched: true,
      output: { scripts: ['postinstall'] },
    })
  })

  it('matches the registry hasInstallScript flag', () => {
    expect(matchSelector(sel.installScripts(), facts({ hasInstallScript: true }), ctx).matched).toBe(true)
  })

  it('ignores scripts that do not run on install', () => {
    expect(
      matchSelector(sel.installScripts(), facts({ scripts: { test: 'vitest', prepare: 'tsc' } }), ctx).matched,
    ).toBe(false)
  })
})

describe('vulnerability', () => {
  const vulnerable = context({
    records: [
      osvRecord('GHSA-low', 'left-pad', { database_specific: { severity: 'LOW' } }),
      osvRecord('GHSA-crit', 'left-pad', {
        severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }],
      }),
    ],
  })

  it('lists every advisory without a threshold', () => {
    const result = matchSelector(sel.vulnerability(), facts(), vulnerable)
    expect((result.output?.advisories as { id: string }[]).map((a) => a.id)).toEqual(['GHSA-low', 'GHSA-crit'])
  })

  it('filters by minimum severity and reports ids and scores', () => {
    expect(matchSelector(sel.vulnerability({ minSeverity: 'high' }), facts(), vulnerable).output).toEqual({
      advisories: [
        {
          id: 'GHSA-crit',
          severity: 'critical',
          cvss: 9.8,
          summary: 'GHSA-crit summary',
          url: 'https://osv.dev/vulnerability/GHSA-crit',
        },
      ],
    })
  })

  it('names the first advisory, its severity, summary and link, and the count in its message', () => {
    expect(matchSelector(sel.vulnerability(), facts(), vulnerable).message).toBe(
      '2 known vulnerabilities, first GHSA-low (low) GHSA-low summary, https://osv.dev/vulnerability/GHSA-low',
    )
    expect(matchSelector(sel.vulnerability({ minSeverity: 'high' }), facts(), vulnerable).message).toBe(
      'known vulnerability GHSA-crit (critical) GHSA-crit summary, https://osv.dev/vulnerability/GHSA-crit',
    )
  })

  it('filters by minimum CVSS score', () => {
    const result = matchSelector(sel.vulnerability({ minCvss: 9.9 }), facts(), vulnerable)
    expect(result.matched).toBe(false)
  })

  it('compares a severity-only advisory with minCvss through its band', () => {
    const result = matchSelector(sel.vulnerability({ minCvss: 0.1 }), facts(), vulnerable)
    expect((result.output?.advisories as { id: string }[]).map((a) => a.id)).toContain('GHSA-low')
  })

  it('counts an advisory of unknown severity as meeting the threshold', () => {
    const unknown = context({ records: [osvRecord('GHSA-u', 'left-pad')] })
    expect(matchSelector(sel.vulnerability({ minSeverity: 'critical' }), facts(), unknown).output).toEqual({
      advisories: [
        { id: 'GHSA-u', severity: 'unknown', summary: 'GHSA-u summary', url: 'https://osv.dev/vulnerability/GHSA-u' },
      ],
    })
  })

  it('does not match a fixed version', () => {
    expect(matchSelector(sel.vulnerability(), facts({ version: '2.0.0' }), vulnerable).matched).toBe(false)
  })

  it('does not count malware reports as vulnerabilities', () => {
    const malware = context({ records: [osvRecord('MAL-1', 'left-pad')] })
    expect(matchSelector(sel.vulnerability(), facts(), malware).matched).toBe(false)
  })
})

describe('malware', () => {
  it('reports the OSV finding', () => {
    const malware = context({
      records: [osvRecord('MAL-2024-1', 'left-pad', { summary: 'Malicious code in left-pad (npm)' })],
    })
    expect(matchSelector(sel.malware(), facts(), malware).output).toEqual({
      finding: 'Malicious code in left-pad (npm)',
      scanner: 'osv',
      confidence: 'high',
      signals: ['MAL-2024-1'],
      advisories: [
        {
          id: 'MAL-2024-1',
          severity: 'critical',
          summary: 'Malicious code in left-pad (npm)',
          url: 'https://osv.dev/vulnerability/MAL-2024-1',
        },
      ],
    })
  })

  it('names the first report and how many more there are', () => {
    const two = context({
      records: [osvRecord('MAL-2024-1', 'left-pad', { summary: 'first' }), osvRecord('MAL-2024-2', 'left-pad')],
    })
    const result = matchSelector(sel.malware(), facts(), two)
    expect(result.message).toBe(
      'malicious package: first (MAL-2024-1 and 1 more report, https://osv.dev/vulnerability/MAL-2024-1)',
    )
    expect((result.output?.advisories as { id: string }[]).map((a) => a.id)).toEqual(['MAL-2024-1', 'MAL-2024-2'])
  })

  it('does not match a package without reports', () => {
    expect(matchSelector(sel.malware(), facts(), ctx).matched).toBe(false)
  })
})

describe('combinators', () => {
  it('all matches when every child matches', () => {
    expect(matchSelector(sel.all(sel.name('left-pad'), sel.range('left-pad', '1.x')), facts(), ctx).matched).toBe(true)
  })

  it('all does not match when one child fails', () => {
    expect(matchSelector(sel.all(sel.name('left-pad'), sel.deprecated()), facts(), ctx).matched).toBe(false)
  })

  it('any matches when one child matches', () => {
    expect(matchSelector(sel.any(sel.deprecated(), sel.name('left-pad')), facts(), ctx).matched).toBe(true)
  })

  it('any does not match when no child matches', () => {
    expect(matchSelector(sel.any(sel.deprecated(), sel.name('x')), facts(), ctx).matched).toBe(false)
  })

  it('not inverts its child', () => {
    expect(matchSelector(sel.not(sel.name('@acme/*')), facts(), ctx).matched).toBe(true)
  })

  it('all carries the output of its matching children', () => {
    const malware = context({ records: [osvRecord('MAL-1', 'left-pad')] })
    const result = matchSelector(sel.all(sel.malware(), sel.not(sel.name('@acme/*'))), facts(), malware)
    expect(result.output?.signals).toEqual(['MAL-1'])
  })
})
