import { describe, expect, it } from 'vitest'
import { createAdvisoryIndex, mergeAdvisoryIndexes } from '../../server/advisories/index-build'
import { advisory, osvRecord } from './fixtures'

describe('createAdvisoryIndex', () => {
  const index = createAdvisoryIndex([
    advisory(osvRecord('GHSA-1', 'lodash', {}, [{ introduced: '0' }, { fixed: '4.17.21' }])),
    advisory(osvRecord('MAL-2024-9', 'evil-pkg', {}, [{ introduced: '0' }])),
    advisory({
      id: 'PYSEC-1',
      affected: [{ package: { ecosystem: 'PyPI', name: 'Django_Utils' }, versions: ['1.0'] }],
    }),
  ])

  it('returns vulnerabilities affecting the version', () => {
    expect(index.lookup('npm', 'lodash', '4.17.20').vulnerabilities.map((a) => a.id)).toEqual(['GHSA-1'])
  })

  it('returns nothing for a fixed version', () => {
    expect(index.lookup('npm', 'lodash', '4.17.21')).toEqual({ vulnerabilities: [], malware: [] })
  })

  it('returns malware reports separately', () => {
    expect(index.lookup('npm', 'evil-pkg', '1.0.0').malware.map((a) => a.id)).toEqual(['MAL-2024-9'])
  })

  it('maps our ecosystem names to OSV names and normalizes PyPI names', () => {
    expect(index.lookup('pypi', 'django-utils', '1.0').vulnerabilities.map((a) => a.id)).toEqual(['PYSEC-1'])
  })

  it('does not return npm advisories for another ecosystem', () => {
    expect(index.lookup('nuget', 'lodash', '4.17.20').vulnerabilities).toEqual([])
  })

  it('counts distinct advisories', () => {
    expect(index.size).toBe(3)
  })

  it('keeps the first of two advisories with the same id', () => {
    const twice = createAdvisoryIndex([
      advisory(osvRecord('GHSA-1', 'a', { summary: 'first' })),
      advisory(osvRecord('GHSA-1', 'a', { summary: 'second' })),
    ])
    expect(twice.lookup('npm', 'a', '1.0.0').vulnerabilities.map((a) => a.summary)).toEqual(['first'])
  })
})

describe('mergeAdvisoryIndexes', () => {
  it('answers lookups from every merged index', () => {
    const merged = mergeAdvisoryIndexes(
      createAdvisoryIndex([advisory(osvRecord('GHSA-1', 'a'))]),
      createAdvisoryIndex([advisory(osvRecord('GHSA-2', 'a'))]),
    )
    expect(merged.lookup('npm', 'a', '1.0.0').vulnerabilities.map((a) => a.id)).toEqual(['GHSA-1', 'GHSA-2'])
  })

  it('lets the first index win on duplicate ids', () => {
    const merged = mergeAdvisoryIndexes(
      createAdvisoryIndex([advisory(osvRecord('GHSA-1', 'a', { summary: 'dir' }))]),
      createAdvisoryIndex([advisory(osvRecord('GHSA-1', 'a', { summary: 'upstream' }))]),
    )
    expect(merged.lookup('npm', 'a', '1.0.0').vulnerabilities.map((a) => a.summary)).toEqual(['dir'])
  })
})
