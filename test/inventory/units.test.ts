import { describe, expect, it } from 'vitest'
import { InventoryRecorder } from '../../server/inventory/recorder'
import { mergeVersion, type InventoryAddition } from '../../storage/repositories/inventory'
import { changedAdvisories } from '../../server/exposures/changes'
import { exposureId, exposuresOf, packagesNamed } from '../../server/exposures/match'
import { createAdvisoryIndex } from '../../server/advisories/index-build'
import type { Advisory } from '../../server/advisories/types'
import type { InventoryPackage } from '../../storage/model/inventory'
import { inventorySettings } from '../../server/inventory/settings'
import { buildSbom, purlOf } from '../../server/inventory/sbom'
import { cyclonedx15Validator } from '../support/cyclonedx'

const served = (over: Partial<Parameters<InventoryRecorder['served']>[0]> = {}) => ({
  ns: 'default',
  firewall: 'main',
  ecosystem: 'npm' as const,
  packageName: 'left-pad',
  version: '1.3.0',
  principal: 'alice',
  at: 1_000,
  ...over,
})

/** A repository double that records merges (the recorder's only port). */
function merges(fail = 0) {
  const calls: { ns: string; additions: InventoryAddition[] }[] = []
  let failures = fail
  return {
    calls,
    merge: async (ns: string, additions: InventoryAddition[]) => {
      if (failures-- > 0) throw new Error('storage down')
      calls.push({ ns, additions })
    },
  }
}

describe('the inventory recorder', () => {
  it('coalesces repeated downloads into one addition: count, first and last time, newest principal first', async () => {
    const repo = merges()
    const recorder = new InventoryRecorder(repo, 60_000)
    recorder.served(served({ at: 2_000, principal: 'alice' }))
    recorder.served(served({ at: 1_000, principal: 'bob' }))
    recorder.served(served({ at: 3_000, principal: 'carol' }))
    recorder.served(served({ at: 4_000, principal: 'alice' }))
    await recorder.flush()
    expect(repo.calls).toHaveLength(1)
    expect(repo.calls[0].additions).toEqual([
      expect.objectContaining({
        firewall: 'main',
        nameKey: 'left-pad',
        version: '1.3.0',
        count: 4,
        firstServedAt: 1_000,
        lastServedAt: 4_000,
        servedTo: ['alice', 'carol', 'bob'],
      }),
    ])
    await recorder.close()
  })

  it('keeps a failed flush for the next one, counts included', async () => {
    const repo = merges(1)
    const recorder = new InventoryRecorder(repo, 60_000)
    recorder.served(served())
    recorder.served(served())
    await recorder.flush()
    expect(repo.calls).toHaveLength(0)
    recorder.served(served({ at: 5_000 }))
    await recorder.flush()
    expect(repo.calls[0].additions[0]).toMatchObject({ count: 3, firstServedAt: 1_000, lastServedAt: 5_000 })
    await recorder.close()
  })

  it('keeps at most its bound of distinct versions while storage refuses, and retries only on its timer', async () => {
    const calls: InventoryAddition[][] = []
    let down = true
    let attempts = 0
    const repo = {
      merge: async (_ns: string, additions: InventoryAddition[]) => {
        attempts++
        if (down) throw new Error('storage down')
        calls.push(additions)
      },
    }
    const recorder = new InventoryRecorder(repo, 60_000, 6_000)
    for (let i = 0; i < 5_000; i++) recorder.served(served({ version: `1.0.${i}` }))
    await recorder.flush() // the flush at 5,000 fails, and so does this one: the entries wait
    const before = attempts
    for (let i = 5_000; i < 9_000; i++) recorder.served(served({ version: `1.0.${i}` }))
    recorder.served(served({ version: '1.0.0' })) // a waiting version is still counted
    expect(attempts).toBe(before) // no flush per download while storage refuses
    expect(recorder.dropped).toBe(3_000)
    down = false
    await recorder.close()
    expect(calls[0]).toHaveLength(6_000)
    expect(calls[0].find((a) => a.version === '1.0.0')?.count).toBe(2)
    expect(calls[0].some((a) => a.version === '1.0.6000')).toBe(false)
  })

  it('writes what is pending on close, and PyPI spellings of one package meet', async () => {
    const repo = merges()
    const recorder = new InventoryRecorder(repo, 60_000)
    recorder.served(served({ ecosystem: 'pypi', packageName: 'Foo_Bar', version: '1.0' }))
    recorder.served(served({ ecosystem: 'pypi', packageName: 'foo-bar', version: '1.0' }))
    await recorder.close()
    expect(repo.calls[0].additions).toHaveLength(1)
    expect(repo.calls[0].additions[0]).toMatchObject({ nameKey: 'foo-bar', count: 2 })
  })
})

describe('merging into a stored version', () => {
  const addition = (over: Partial<InventoryAddition>): InventoryAddition => ({
    firewall: 'main',
    ecosystem: 'npm',
    packageName: 'x',
    nameKey: 'x',
    version: '1.0.0',
    firstServedAt: 10,
    lastServedAt: 20,
    count: 1,
    servedTo: ['a'],
    ...over,
  })

  it('commutes: two processes flushing in either order store the same record', () => {
    const one = addition({ firstServedAt: 5, lastServedAt: 30, count: 2, servedTo: ['b', 'a'] })
    const two = addition({ firstServedAt: 10, lastServedAt: 20, count: 3, servedTo: ['c'] })
    const ab = mergeVersion(mergeVersion(undefined, one), two)
    const ba = mergeVersion(mergeVersion(undefined, two), one)
    expect(ab).toEqual({ firstServedAt: 5, lastServedAt: 30, count: 5, servedTo: ['b', 'a', 'c'] })
    expect(ba).toEqual(ab)
  })

  it('keeps the newest 100 principals', () => {
    const many = Array.from({ length: 150 }, (_, i) => `p${i}`)
    const merged = mergeVersion(
      mergeVersion(undefined, addition({ servedTo: many })),
      addition({ servedTo: ['new'], lastServedAt: 99 }),
    )
    expect(merged.servedTo).toHaveLength(100)
    expect(merged.servedTo[0]).toBe('new')
  })
})

describe('INVENTORY_RETENTION', () => {
  it('defaults to 400 days and refuses what is not a duration, naming the variable', () => {
    expect(inventorySettings({}).retentionMs).toBe(400 * 86_400_000)
    expect(inventorySettings({ INVENTORY_RETENTION: '30d' }).retentionMs).toBe(30 * 86_400_000)
    expect(() => inventorySettings({ INVENTORY_RETENTION: 'forever' })).toThrow(/INVENTORY_RETENTION/)
  })
})

const mal = (id: string, name: string, versions: string[]): Advisory => ({
  id,
  aliases: [],
  malware: true,
  affected: [{ ecosystem: 'npm', name, ranges: [], versions }],
})

describe('exposure matching', () => {
  const doc: InventoryPackage = {
    ecosystem: 'npm',
    packageName: 'evil',
    firewalls: {
      main: { '1.0.0': { firstServedAt: 0, lastServedAt: 1_000, count: 2, servedTo: ['alice'] } },
      other: { '2.0.0': { firstServedAt: 0, lastServedAt: 1_000, count: 1, servedTo: ['bob'] } },
    },
  }

  it('names a served version an advisory affects, on each firewall that served it, and no other', () => {
    const [named] = packagesNamed([mal('MAL-1', 'evil', ['1.0.0'])])
    const found = exposuresOf(named, doc, '2026-01-01T00:00:00.000Z')
    expect(found).toEqual([
      expect.objectContaining({
        firewall: 'main',
        version: '1.0.0',
        servedTo: ['alice'],
        advisory: { id: 'MAL-1', aliases: [], kind: 'malware' },
        status: 'open',
      }),
    ])
  })

  it('derives the same id from the same firewall, version and advisory, and another from any other', () => {
    const ref = { ecosystem: 'npm', nameKey: 'evil' }
    expect(exposureId('main', ref, '1.0.0', 'MAL-1')).toBe(exposureId('main', ref, '1.0.0', 'MAL-1'))
    expect(exposureId('main', ref, '1.0.0', 'MAL-1')).not.toBe(exposureId('main', ref, '1.0.0', 'MAL-2'))
    expect(exposureId('main', ref, '1.0.0', 'MAL-1')).toMatch(/^exp-[0-9a-f]{32}$/)
  })

  it('compares indexes: new and changed records only', async () => {
    const before = createAdvisoryIndex([mal('MAL-1', 'a', ['1']), mal('MAL-2', 'b', ['1'])])
    const after = createAdvisoryIndex([
      mal('MAL-1', 'a', ['1']),
      mal('MAL-2', 'b', ['1', '2']),
      mal('MAL-3', 'c', ['1']),
    ])
    const changed = await changedAdvisories(before, after)
    expect(changed.map((a) => a.id).sort()).toEqual(['MAL-2', 'MAL-3'])
  })
})

describe('the SBOM', () => {
  it('names each ecosystem’s packages as the purl-spec does', () => {
    expect(purlOf('npm', '@babel/core', '7.0.0').toString()).toBe('pkg:npm/%40babel/core@7.0.0')
    expect(purlOf('pypi', 'Foo_Bar', '1.0').toString()).toBe('pkg:pypi/foo-bar@1.0')
    expect(purlOf('maven', 'com.acme:lib', '1.0').toString()).toBe('pkg:maven/com.acme/lib@1.0')
    expect(purlOf('nuget', 'Newtonsoft.Json', '13.0.1').toString()).toBe('pkg:nuget/Newtonsoft.Json@13.0.1')
  })

  it('is a valid CycloneDX 1.5 document with one component per served version', () => {
    const entry = (packageName: string, version: string) => ({
      firewall: 'main',
      packageName,
      version,
      ecosystem: 'npm',
      firstServedAt: '2026-01-01T00:00:00.000Z',
      lastServedAt: '2026-01-02T00:00:00.000Z',
      count: 3,
      servedTo: ['alice'],
    })
    const json = buildSbom({ namespace: 'default', firewall: 'main', ecosystem: 'npm', now: 0 }, [
      entry('@scope/a', '1.0.0'),
      entry('b', '2.0.0'),
      entry('b', '2.1.0'),
    ])
    const bom = JSON.parse(json)
    expect(cyclonedx15Validator()(bom)).toEqual([])
    expect(bom.components.map((c: { purl: string }) => c.purl)).toEqual([
      'pkg:npm/%40scope/a@1.0.0',
      'pkg:npm/b@2.0.0',
      'pkg:npm/b@2.1.0',
    ])
  })
})
