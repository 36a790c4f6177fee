import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Backend } from '../../storage'
import { AdvisoryFeedRepository } from '../../storage/repositories/advisory-feed'
import { LeaseRepository } from '../../storage/repositories/leases'
import { AdvisoryFeed } from '../../server/advisories/feed-worker'
import { refreshRefusal } from '../../server/advisories/refresh-guard'
import { renderMetrics } from '../../server/observability/metrics'
import { createAdvisorySource, type AdvisorySource } from '../../server/advisories/directory-source'
import { makeBackend } from '../support/backends'
import { fixtureRecords, malRecord, osvZip, startOsvFeed, type OsvFeed } from '../support/osv-feed'
import { waitFor } from '../support/wait-for'

/**
 * CONTRACT section 8, "advisory data never silently shrinks": a load that holds no record, skips
 * over 1 % of its entries as invalid, or would replace the data with less than half of it, is
 * refused; the data served stays, `lastError` says why and `advisory_refresh_refused_total` rises.
 * An archive past `ADVISORY_MAX_ENTRIES` is refused while it is read.
 */

const npm = fixtureRecords('npm') // 29 records and 2 withdrawn
const mal = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => malRecord(`MAL-2030-${from + i}`, 'npm', `bad-${from + i}`))
/** Entries that are JSON but not OSV: counted invalid. */
const invalid = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`BAD-${i}.json`, '{"x":1}']))

async function refusedCount(source: string): Promise<number> {
  const { body } = await renderMetrics()
  const line = body
    .split('\n')
    .find((l) => l.startsWith('advisory_refresh_refused_total{') && l.includes(`source="${source}"`))
  return line ? Number(line.split(' ').pop()) : 0
}

describe('refreshRefusal', () => {
  it('accepts 1 % invalid and half the records, refuses past either', () => {
    expect(refreshRefusal({ records: 99, invalid: 1, withdrawn: 0 }, 198, true)).toBeNull()
    expect(refreshRefusal({ records: 98, invalid: 2, withdrawn: 0 }, null, true)).toMatch(
      /2 of 100 entries are invalid/,
    )
    expect(refreshRefusal({ records: 98, invalid: 0, withdrawn: 0 }, 197, true)).toMatch(
      /98 valid records would replace 197/,
    )
    expect(refreshRefusal({ records: 0, invalid: 0, withdrawn: 0 }, null, true)).toMatch(/no valid record/)
    expect(refreshRefusal({ records: 0, invalid: 0, withdrawn: 0 }, null, false)).toBeNull()
  })
})

describe('the feed refuses a degenerate archive and keeps its data', () => {
  let feed: OsvFeed
  let backend: Backend
  let worker: AdvisoryFeed
  beforeAll(async () => {
    feed = await startOsvFeed({ npm: osvZip(npm) })
    backend = await makeBackend('fs')
  })
  afterAll(async () => {
    await worker?.stop()
    await backend.close()
    await feed.close()
  })
  const start = (maxEntries?: number) => {
    worker = new AdvisoryFeed({
      repository: new AdvisoryFeedRepository(backend),
      lease: (ecosystem) => new LeaseRepository(backend).advisoryFeed(ecosystem),
      settings: { url: feed.url, refreshMs: 3_600_000, refresh: '1h', ...(maxEntries ? { maxEntries } : {}) },
      clock: { now: () => Date.now() },
      owner: 'guard',
      ecosystemsInUse: async () => ['npm'],
    })
    return worker
  }
  const blocked = () =>
    worker
      .index('npm')
      ?.lookup('npm', 'flatmap-stream', '0.1.1')
      .malware.map((a) => a.id)
  const lastError = () => worker.view().find((v) => v.ecosystem === 'npm')?.state?.lastError?.message

  it('loads the fixture feed (29 records)', async () => {
    expect((await start().sync(['npm']))[0]).toMatchObject({ outcome: 'loaded', records: 29 })
    expect(blocked()).toEqual(['MAL-2022-1142'])
  })

  it('refuses a zip holding only README.txt: the blocked version stays blocked', async () => {
    const before = await refusedCount('feed')
    feed.publish('npm', osvZip([], { 'README.txt': 'nothing here' }))
    expect((await worker.sync(['npm']))[0]).toMatchObject({
      outcome: 'failed',
      error: expect.stringMatching(/no valid record/),
    })
    expect(blocked()).toEqual(['MAL-2022-1142'])
    expect(lastError()).toMatch(/no valid record/)
    expect(await refusedCount('feed')).toBe(before + 1)
  })

  it('refuses 51 invalid entries of 52', async () => {
    feed.publish('npm', osvZip([malRecord('MAL-2030-1', 'npm', 'x')], invalid(51)))
    expect((await worker.sync(['npm']))[0].error).toMatch(/51 of 52 entries are invalid/)
    expect(blocked()).toEqual(['MAL-2022-1142'])
  })

  it('refuses an archive with fewer than half the records, accepts a larger one', async () => {
    feed.publish('npm', osvZip(npm.slice(0, 14)))
    expect((await worker.sync(['npm']))[0].error).toMatch(/valid records would replace 29/)
    expect(blocked()).toEqual(['MAL-2022-1142'])
    feed.publish('npm', osvZip([...npm, ...mal(1)]))
    expect((await worker.sync(['npm']))[0]).toMatchObject({ outcome: 'loaded', records: 30 })
    expect(lastError()).toBeUndefined()
  })

  it('accepts 1 invalid entry in 100 (the bound) and refuses 2', async () => {
    feed.publish('npm', osvZip([...npm, ...mal(68)], invalid(1))) // 97 records, 2 withdrawn, 1 invalid
    expect((await worker.sync(['npm']))[0]).toMatchObject({ outcome: 'loaded', records: 97, invalid: 1 })
    feed.publish('npm', osvZip([...npm, ...mal(67)], invalid(2)))
    expect((await worker.sync(['npm']))[0].error).toMatch(/2 of 100 entries are invalid/)
  })

  it('reads an archive of ADVISORY_MAX_ENTRIES entries and refuses one more', async () => {
    await worker.stop()
    start(100)
    feed.publish('npm', osvZip([...npm, ...mal(69)])) // 98 records + 2 withdrawn = 100 entries
    expect((await worker.sync(['npm']))[0]).toMatchObject({ outcome: 'loaded', records: 98 })
    feed.publish('npm', osvZip([...npm, ...mal(70)]))
    const before = await refusedCount('feed')
    expect((await worker.sync(['npm']))[0].error).toMatch(/more than 100 entries \(ADVISORY_MAX_ENTRIES\)/)
    expect(worker.index('npm')?.size).toBe(98)
    expect(await refusedCount('feed')).toBe(before + 1)
  })
})

describe('ADVISORY_DIR reloads are held to the same rules', () => {
  let dir: string
  let source: AdvisorySource | undefined
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'adv-guard-'))
  })
  afterEach(() => source?.close())
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  const size = () => source!.current().size

  it('keeps 10 records when a reload would leave 4, and says why', async () => {
    await writeFile(join(dir, 'a.json'), JSON.stringify(mal(10)))
    source = createAdvisorySource(dir)
    await source.ready
    expect(size()).toBe(10)
    const before = await refusedCount('directory')
    await writeFile(join(dir, 'a.json'), JSON.stringify(mal(4)))
    await waitFor(() => source!.refused() !== null, 5_000, 'the refused reload', 20)
    expect(source.refused()).toMatch(/4 valid records would replace 10/)
    expect(size()).toBe(10)
    expect(await refusedCount('directory')).toBe(before + 1)
    await writeFile(join(dir, 'a.json'), JSON.stringify(mal(12)))
    await waitFor(() => size() === 12, 5_000, 'the accepted reload', 20)
    expect(source.refused()).toBeNull()
  })

  it('does not load a directory past ADVISORY_MAX_ENTRIES records', async () => {
    await writeFile(join(dir, 'a.json'), JSON.stringify(mal(12)))
    source = createAdvisorySource(dir, { maxRecords: 11 })
    await source.ready
    expect(source.loaded()).toBe(false)
    expect(source.refused()).toMatch(/more than 11 records/)
  })
})
