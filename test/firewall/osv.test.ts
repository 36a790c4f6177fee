import { describe, expect, it } from 'vitest'
import { isVersionAffected } from '../../server/advisories/affected'
import { parseOsvRecord } from '../../server/advisories/osv'
import type { AffectedPackage } from '../../server/advisories/types'
import { advisory, osvRecord } from './fixtures'

const CRITICAL_VECTOR = 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H'

function npmRange(events: Record<string, string>[], versions: string[] = []): AffectedPackage {
  return advisory(osvRecord('GHSA-x', 'pkg', {}, events)).affected.map((a) => ({ ...a, versions }))[0]
}

describe('parseOsvRecord', () => {
  it('takes severity from database_specific.severity', () => {
    expect(advisory(osvRecord('GHSA-1', 'pkg', { database_specific: { severity: 'MODERATE' } })).severity).toBe(
      'moderate',
    )
  })

  it('reads MEDIUM as moderate', () => {
    expect(advisory(osvRecord('GHSA-1', 'pkg', { database_specific: { severity: 'MEDIUM' } })).severity).toBe(
      'moderate',
    )
  })

  it('derives severity from the CVSS v3 vector when the database gives none', () => {
    const parsed = advisory(osvRecord('GHSA-1', 'pkg', { severity: [{ type: 'CVSS_V3', score: CRITICAL_VECTOR }] }))
    expect(parsed).toMatchObject({ severity: 'critical', cvss: 9.8, cvssVector: CRITICAL_VECTOR })
  })

  it('prefers the database severity over the CVSS band but keeps the score', () => {
    const parsed = advisory(
      osvRecord('GHSA-1', 'pkg', {
        severity: [{ type: 'CVSS_V3', score: CRITICAL_VECTOR }],
        database_specific: { severity: 'HIGH' },
      }),
    )
    expect(parsed).toMatchObject({ severity: 'high', cvss: 9.8 })
  })

  it('leaves severity unset when neither source is present', () => {
    expect(advisory(osvRecord('GHSA-1', 'pkg')).severity).toBeUndefined()
  })

  it('marks MAL- records as malware', () => {
    expect(advisory(osvRecord('MAL-2024-1', 'evil')).malware).toBe(true)
  })

  it('does not mark GHSA records as malware', () => {
    expect(advisory(osvRecord('GHSA-1', 'pkg')).malware).toBe(false)
  })

  it('reports withdrawn records as withdrawn', () => {
    expect(parseOsvRecord(osvRecord('GHSA-1', 'pkg', { withdrawn: '2024-01-01T00:00:00Z' }))).toEqual({
      kind: 'withdrawn',
      id: 'GHSA-1',
    })
  })

  it('reports a record without id as invalid', () => {
    expect(parseOsvRecord({ summary: 'x' }).kind).toBe('invalid')
  })

  it('drops GIT ranges', () => {
    const parsed = advisory({
      id: 'OSV-1',
      affected: [
        {
          package: { ecosystem: 'npm', name: 'pkg' },
          ranges: [{ type: 'GIT', repo: 'x', events: [{ introduced: 'abc' }] }],
        },
      ],
    })
    expect(parsed.affected[0].ranges).toEqual([])
  })

  it('falls back to the first line of details for the summary', () => {
    expect(advisory({ id: 'OSV-1', details: 'first line\nsecond' }).summary).toBe('first line')
  })
})

describe('isVersionAffected', () => {
  it('includes the introduced version', () => {
    expect(isVersionAffected(npmRange([{ introduced: '1.0.0' }, { fixed: '1.2.0' }]), '1.0.0')).toBe(true)
  })

  it('excludes the fixed version', () => {
    expect(isVersionAffected(npmRange([{ introduced: '1.0.0' }, { fixed: '1.2.0' }]), '1.2.0')).toBe(false)
  })

  it('excludes versions before introduced', () => {
    expect(isVersionAffected(npmRange([{ introduced: '1.0.0' }, { fixed: '1.2.0' }]), '0.9.9')).toBe(false)
  })

  it('includes last_affected itself', () => {
    expect(isVersionAffected(npmRange([{ introduced: '0' }, { last_affected: '1.4.0' }]), '1.4.0')).toBe(true)
  })

  it('excludes versions after last_affected', () => {
    expect(isVersionAffected(npmRange([{ introduced: '0' }, { last_affected: '1.4.0' }]), '1.4.1')).toBe(false)
  })

  it('treats an open range as affecting every later version', () => {
    expect(isVersionAffected(npmRange([{ introduced: '2.0.0' }]), '99.0.0')).toBe(true)
  })

  it('evaluates several intervals in one range regardless of event order', () => {
    const range = npmRange([{ fixed: '3.1.0' }, { introduced: '1.0.0' }, { introduced: '3.0.0' }, { fixed: '1.5.0' }])
    expect([
      isVersionAffected(range, '1.4.0'),
      isVersionAffected(range, '2.0.0'),
      isVersionAffected(range, '3.0.5'),
    ]).toEqual([true, false, true])
  })

  it('matches an explicitly listed version', () => {
    // The range alone would not cover it: the `versions` list does.
    expect(isVersionAffected(npmRange([{ introduced: '9.9.9' }], ['0.0.1-weird']), '0.0.1-weird')).toBe(true)
  })

  it('never puts a non-semver npm version inside a range', () => {
    expect(isVersionAffected(npmRange([{ introduced: '0' }]), 'latest')).toBe(false)
  })

  it('orders PyPI release candidates before the release', () => {
    const range: AffectedPackage = {
      ecosystem: 'PyPI',
      name: 'django',
      versions: [],
      ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '4.0' }, { fixed: '4.2.1' }] }],
    }
    expect([
      isVersionAffected(range, '4.2.1rc1'),
      isVersionAffected(range, '4.2.1'),
      isVersionAffected(range, '4.1.10'),
    ]).toEqual([true, false, true])
  })
})
