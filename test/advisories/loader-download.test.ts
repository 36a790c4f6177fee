import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { inThreadLoader, type ArchiveLoader } from '../../server/advisories/archive-loader'
import { loaderThread } from '../support/loader-thread'
import type { FeedRequest } from '../../server/advisories/feed-client'
import { startLoopback, type Loopback } from '../support/loopback'
import { waitFor } from '../support/wait-for'
import { fixtureRecords, malRecord, osvZip, startOsvFeed, type OsvFeed } from '../support/osv-feed'

/**
 * The feed download as the loader does it: on the loader thread (as the service runs) the thread
 * itself fetches the archive and reads the body as it arrives; on this thread (`nitro dev`, the
 * admin CLI) the same job runs here. Both answer alike: 304, a new archive with its validators, a
 * failure with a message fit for `lastError`.
 */

const npm = fixtureRecords('npm')
let feed: OsvFeed
const stalls: Loopback[] = []

beforeAll(async () => {
  feed = await startOsvFeed({ npm: osvZip(npm) })
})
afterAll(async () => {
  await feed.close()
})
afterEach(async () => {
  vi.restoreAllMocks()
  for (const stall of stalls.splice(0)) await stall.close()
})

const request = (url: string, validators: FeedRequest['validators'] = {}): FeedRequest => ({
  url,
  validators,
  headersTimeoutMs: 30_000,
  idleTimeoutMs: 60_000,
})

/** A feed that answers nothing (`headers`) or the headers and half the archive, then nothing. */
async function stalled(what: 'headers' | 'body'): Promise<{ url: string; asked: () => boolean }> {
  const zip = osvZip(npm)
  let asked = false
  const server = await startLoopback((_req, res) => {
    asked = true
    if (what === 'headers') return
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length })
    res.write(zip.subarray(0, zip.length >> 1))
  })
  stalls.push(server)
  return { url: `${server.url}/npm/all.zip`, asked: () => asked }
}

const loaders: [string, ArchiveLoader][] = [
  ['the loader thread', loaderThread()!],
  ['this thread', inThreadLoader],
]

describe.each(loaders)('a feed download on %s', (where, loader) => {
  const url = () => `${feed.url}/npm/all.zip`
  const onThread = where === 'the loader thread'

  it('reads a 200 into an index with its validators; the request thread fetches nothing itself', async () => {
    expect(loader).toBeTruthy()
    const fetching = vi.spyOn(globalThis, 'fetch')
    const outcome = await loader.download(request(url()))
    expect(fetching).toHaveBeenCalledTimes(onThread ? 0 : 1)
    if (outcome.kind !== 'changed') throw new Error(`expected a new archive, got ${outcome.kind}`)
    expect([outcome.etag, outcome.lastModified]).toEqual([expect.stringMatching(/^"/), expect.stringMatching(/GMT$/)])
    expect([outcome.loaded.records, outcome.loaded.withdrawn]).toEqual([29, 2])
    const found = outcome.loaded.index.lookup('npm', 'flatmap-stream', '0.1.1').malware.map((a) => a.id)
    expect(found).toEqual(['MAL-2022-1142'])
    expect(feed.requests.at(-1)).toEqual({ path: '/npm/all.zip', status: 200 })
  })

  it('asks conditionally and takes a 304 as unchanged', async () => {
    const first = await loader.download(request(url()))
    if (first.kind !== 'changed') throw new Error('expected a new archive')
    const { etag, lastModified } = first
    expect(await loader.download(request(url(), { etag, lastModified }))).toEqual({ kind: 'not-modified' })
    expect(feed.requests.at(-1)).toEqual({
      path: '/npm/all.zip',
      status: 304,
      ifNoneMatch: etag,
      ifModifiedSince: lastModified,
    })
  })

  it('reads only the changed entries of a changed archive', async () => {
    const first = await loader.download(request(url()))
    if (first.kind !== 'changed') throw new Error('expected a new archive')
    feed.publish('npm', osvZip([...npm, malRecord('MAL-2025-8001', 'npm', 'newer-evil')]))
    try {
      const validators = { etag: first.etag, lastModified: first.lastModified }
      const next = await loader.download(request(url(), validators), { previous: first.loaded.memory })
      if (next.kind !== 'changed') throw new Error('expected a new archive')
      expect(next.etag).not.toBe(first.etag)
      expect([next.loaded.records, next.loaded.reused]).toEqual([30, 31])
      expect(next.loaded.index.lookup('npm', 'newer-evil', '1.0.0').malware.map((a) => a.id)).toEqual(['MAL-2025-8001'])
    } finally {
      feed.publish('npm', osvZip(npm))
    }
  })

  it('refuses a corrupt archive; the previous load stays usable', async () => {
    const first = await loader.download(request(url()))
    if (first.kind !== 'changed') throw new Error('expected a new archive')
    const zip = osvZip(npm)
    feed.publish('npm', zip.subarray(0, zip.length >> 1))
    try {
      await expect(loader.download(request(url()), { previous: first.loaded.memory })).rejects.toThrow(/zip/)
      expect(first.loaded.index.lookup('npm', 'flatmap-stream', '0.1.1').malware).toHaveLength(1)
    } finally {
      feed.publish('npm', zip)
    }
  })

  it('reports a failed download by its reason, never the URL', async () => {
    feed.fail('npm', 503)
    try {
      await expect(loader.download(request(url()))).rejects.toThrow(/^feed answered 503$/)
    } finally {
      feed.heal('npm')
    }
    const closed = await startLoopback(() => undefined)
    await closed.close()
    await expect(loader.download(request(`${closed.url}/npm/all.zip`))).rejects.toThrow(
      /^feed unreachable \(ECONNREFUSED\)$/,
    )
  })

  it('times out waiting for the answer, and between two chunks of the body', async () => {
    // Each case times out on its own phase only: with both timeouts short, a loaded machine could let
    // the headers' timeout fire first in the body case (the test's flakiness under load, issue 26).
    const late = 30_000
    await expect(
      loader.download({ ...request((await stalled('headers')).url), headersTimeoutMs: 300, idleTimeoutMs: late }),
    ).rejects.toThrow(/^feed unreachable \(timed out\)$/)
    await expect(
      loader.download({ ...request((await stalled('body')).url), headersTimeoutMs: late, idleTimeoutMs: 300 }),
    ).rejects.toThrow(/feed download broke off \(timed out\)$/)
  })

  it('stops when aborted', async () => {
    const controller = new AbortController()
    const stall = await stalled('body')
    // The default timeouts (30 s, 60 s) are far off: only the abort can end it within the test's time.
    const loading = loader.download(request(stall.url), { signal: controller.signal })
    await waitFor(stall.asked, 10_000, 'the download to start')
    controller.abort()
    // The server has the request; whether the client already read the headers is a race, so the
    // failure is either phase's, and says the caller stopped it (not a timeout).
    await expect(loading).rejects.toThrow(
      onThread ? /loader thread exited/ : /feed (unreachable|download broke off) \(stopped\)$/,
    )
  })
})
