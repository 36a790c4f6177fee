import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { RedisBackend } from '../../storage'
import { AdvisoryFeedRepository } from '../../storage/repositories/advisory-feed'
import { LeaseRepository } from '../../storage/repositories/leases'
import { AdvisoryFeed } from '../../server/advisories/feed-worker'
import { logger } from '../../server/app/logger'
import type { ArchiveLoader } from '../../server/advisories/archive-loader'
import { loaderThread } from '../support/loader-thread'
import type { Ecosystem } from '../../server/firewall/schema'
import type { PackedAdvisoryIndex } from '../../server/advisories/packed-index'
import { makeBackend } from '../support/backends'
import { fixtureRecords, malRecord, osvZip, startOsvFeed, type OsvFeed } from '../support/osv-feed'

/**
 * The feed worker on a real Redis, as several processes run it: each AdvisoryFeed here stands for
 * one process (own lease owner id, own in-memory index) sharing the same storage. Twice: with the
 * loader thread downloading and reading (as the service runs), and on this thread (`nitro dev`).
 */

const npm = fixtureRecords('npm')
let feed: OsvFeed
let backend: RedisBackend
const workers: AdvisoryFeed[] = []

beforeAll(async () => {
  feed = await startOsvFeed({ npm: osvZip(npm), PyPI: osvZip(fixtureRecords('PyPI')) })
})
afterAll(async () => {
  await feed.close()
})
afterEach(async () => {
  vi.restoreAllMocks()
  for (const worker of workers.splice(0)) await worker.stop()
  await backend?.close()
})

let large: { before: Uint8Array; after: Uint8Array } | undefined
/**
 * About 5 MB of records (several snapshot blocks of 1 MiB), and the same with one record more:
 * zipped once for both loaders, as zipping 20,000 files takes seconds.
 */
function largeArchives(): { before: Uint8Array; after: Uint8Array } {
  if (large) return large
  const fillers = Array.from({ length: 20_000 }, (_, i) => malRecord(`MAL-2024-${i}`, 'npm', `filler-${i}`))
  large = {
    before: osvZip([...npm, ...fillers]),
    after: osvZip([...npm, ...fillers, malRecord('MAL-2026-0001', 'npm', 'fresh-evil')]),
  }
  return large
}

const loaders: [string, ArchiveLoader | undefined][] = [
  ['on the loader thread', loaderThread() ?? undefined],
  ['on this thread', undefined],
]
let loader: ArchiveLoader | undefined

async function process_(name: string, options: { inUse?: Ecosystem[] } = {}) {
  const worker = new AdvisoryFeed({
    repository: new AdvisoryFeedRepository(backend),
    lease: (ecosystem) => new LeaseRepository(backend).advisoryFeed(ecosystem),
    settings: { url: feed.url, refreshMs: 3_600_000, refresh: '1h' },
    clock: { now: () => Date.now() },
    owner: name,
    ecosystemsInUse: async () => options.inUse ?? ['npm'],
    loader,
  })
  workers.push(worker)
  return worker
}

const malwareOf = (worker: AdvisoryFeed, name: string, version: string) =>
  worker
    .index('npm')
    ?.lookup('npm', name, version)
    .malware.map((a) => a.id)

describe.each(loaders)('advisory feed on shared storage, read %s', (where, chosen) => {
  beforeAll(() => {
    loader = chosen
  })

  it('reads where it says (a loader thread exists from the sources)', () => {
    expect(chosen !== undefined).toBe(where === 'on the loader thread')
  })

  it('downloads once: the other process loads the stored snapshot instead', async () => {
    backend = (await makeBackend('redis')) as RedisBackend
    const before = feed.downloads('npm')
    const first = await process_('a')
    await first.runPass()
    expect(feed.downloads('npm')).toBe(before + 1)
    expect(malwareOf(first, 'flatmap-stream', '0.1.1')).toEqual(['MAL-2022-1142'])

    const asked = feed.requests.length
    const second = await process_('b')
    await second.runPass()
    expect(feed.requests.length).toBe(asked)
    expect(malwareOf(second, 'flatmap-stream', '0.1.1')).toEqual(['MAL-2022-1142'])
    expect(second.view().find((v) => v.ecosystem === 'npm')?.state?.records).toBe(29)
  })

  it('the other process reads only the snapshot blocks it does not hold at the next refresh', async () => {
    backend = (await makeBackend('redis')) as RedisBackend
    const { before: archive, after: nextArchive } = largeArchives()
    const indexOf = (worker: AdvisoryFeed) => worker.index('npm') as PackedAdvisoryIndex
    feed.publish('npm', archive)
    try {
      const first = await process_('a')
      await first.runPass()
      const second = await process_('b')
      await second.runPass()
      const before = indexOf(second)
      expect(before.size).toBe(indexOf(first).size)

      feed.publish('npm', nextArchive)
      await first.sync(['npm'])
      // Watched, not replaced: the log line says how many blocks the load took from the index it served.
      const info = vi.spyOn(logger, 'info')
      await second.runPass()
      expect(malwareOf(second, 'fresh-evil', '1.0.0')).toEqual(['MAL-2026-0001'])
      expect(indexOf(second).size).toBe(before.size + 1)
      const loaded = info.mock.calls.find(([message]) => message === 'advisory snapshot loaded')?.[1]
      expect(loaded?.reusedBlocks).toBeGreaterThan(2)
    } finally {
      feed.publish('npm', osvZip(npm))
    }
  })

  it('stores one compressed snapshot per ecosystem in Redis', async () => {
    backend = (await makeBackend('redis')) as RedisBackend
    const worker = await process_('a', { inUse: ['npm', 'pypi'] })
    await worker.runPass()
    await worker.sync(['npm'])
    const keys = await backend.redis.keys(`${backend.prefix}:advisories:snapshot:*`)
    expect(keys.map((k) => k.split(':').slice(-2, -1)[0]).sort()).toEqual(['npm', 'pypi'])
    const stored = await backend.redis.strlen(keys.find((k) => k.includes(':npm:'))!)
    expect(stored).toBeLessThan(Buffer.byteLength(JSON.stringify(npm)) / 3)
  })

  it('answers an unchanged feed with one conditional request and keeps the index', async () => {
    backend = (await makeBackend('redis')) as RedisBackend
    const worker = await process_('a')
    await worker.runPass()
    const index = worker.index('npm')
    const reports = await worker.sync(['npm'])
    expect(reports).toEqual([{ ecosystem: 'npm', outcome: 'unchanged', records: 29 }])
    const last = feed.requests.at(-1)!
    expect([last.status, last.ifNoneMatch]).toEqual([304, expect.stringMatching(/^"/)])
    expect(worker.index('npm')).toBe(index)
  })

  it('swaps in a new archive, and keeps the old index when the next one is corrupt', async () => {
    backend = (await makeBackend('redis')) as RedisBackend
    const worker = await process_('a')
    await worker.runPass()
    feed.publish('npm', osvZip([...npm, malRecord('MAL-2025-7001', 'npm', 'fresh-evil')]))
    expect((await worker.sync(['npm']))[0]).toMatchObject({ outcome: 'loaded', records: 30 })
    expect(malwareOf(worker, 'fresh-evil', '1.0.0')).toEqual(['MAL-2025-7001'])

    const good = worker.index('npm')
    const zip = osvZip(npm)
    feed.publish('npm', zip.subarray(0, zip.length >> 1))
    const [report] = await worker.sync(['npm'])
    expect(report.outcome).toBe('failed')
    expect(report.error).toMatch(/zip/)
    expect(worker.index('npm')).toBe(good)
    const state = await new AdvisoryFeedRepository(backend).state('npm')
    expect([state?.records, state?.lastError?.message]).toEqual([30, expect.stringMatching(/zip/)])
    feed.publish('npm', osvZip(npm))
  })

  it('reads only the changed entries at the next refresh, also after a corrupt one; not after a snapshot load', async () => {
    backend = (await makeBackend('redis')) as RedisBackend
    const worker = await process_('a')
    expect((await worker.sync(['npm']))[0]).toMatchObject({ outcome: 'loaded', records: 29, reused: 0 })
    const zip = osvZip(npm)
    feed.publish('npm', zip.subarray(0, zip.length >> 1))
    expect((await worker.sync(['npm']))[0].outcome).toBe('failed')
    const later = malRecord('MAL-2025-7002', 'npm', 'later-evil')
    feed.publish('npm', osvZip([...npm, later]))
    // The 31 entries of the first archive (29 records, 2 withdrawn) are taken from the first load.
    expect((await worker.sync(['npm']))[0]).toMatchObject({ outcome: 'loaded', records: 30, withdrawn: 2, reused: 31 })
    expect(malwareOf(worker, 'later-evil', '1.0.0')).toEqual(['MAL-2025-7002'])

    // Another process serves the stored snapshot: it knows nothing of the entries, so reads them all.
    const other = await process_('b')
    await other.runPass()
    expect(malwareOf(other, 'later-evil', '1.0.0')).toEqual(['MAL-2025-7002'])
    feed.publish('npm', osvZip([...npm, later, malRecord('MAL-2025-7003', 'npm', 'last-evil')]))
    expect((await other.sync(['npm']))[0]).toMatchObject({ outcome: 'loaded', records: 31, reused: 0 })
    expect((await other.sync(['npm']))[0]).toMatchObject({ outcome: 'unchanged' })
    feed.publish('npm', osvZip(npm))
  })

  it('lets one process download at a time (the lease)', async () => {
    backend = (await makeBackend('redis')) as RedisBackend
    await new LeaseRepository(backend).advisoryFeed('npm').acquire('someone-else', 60_000)
    const worker = await process_('a')
    expect(await worker.sync(['npm'])).toEqual([{ ecosystem: 'npm', outcome: 'busy' }])
    expect(worker.index('npm')).toBeNull()
  })

  it('records a feed that is down and loads once it is back', async () => {
    backend = (await makeBackend('redis')) as RedisBackend
    feed.fail('PyPI', 503)
    const worker = await process_('a', { inUse: ['pypi'] })
    await worker.runPass()
    expect(worker.index('pypi')).toBeNull()
    expect(worker.view().find((v) => v.ecosystem === 'pypi')?.state?.lastError?.message).toBe('feed answered 503')
    feed.heal('PyPI')
    expect((await worker.sync(['pypi']))[0].outcome).toBe('loaded')
    expect(
      worker
        .index('pypi')
        ?.lookup('pypi', 'ctx', '0.2.6')
        .malware.map((a) => a.id),
    ).toEqual(['MAL-2022-1'])
  })
})
