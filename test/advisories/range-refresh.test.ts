import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { downloadArchive, readArchive, type LoadedArchive } from '../../server/advisories/archive-read'
import type { FeedRequest } from '../../server/advisories/feed-client'
import { comparable, chunks, first, refreshed, type Files, zipOf } from '../support/osv-archives'
import { malRecord, startOsvFeed, type OsvFeed } from '../support/osv-feed'
import { send, startLoopback } from '../support/loopback'

/**
 * A refresh of an archive the service already loaded asks for ranges: the last bytes (with the
 * validators, so an unchanged feed is still one 304), the central directory and the changed
 * entries. What it builds is what a full read of the same archive builds; whatever does not fit
 * ranges falls back to reading the archive whole.
 */

// Enough records that the archive (and its directory) is well past the last 64 KiB asked for first.
const fillers: Files = Object.fromEntries(
  Array.from({ length: 1500 }, (_, i) => [
    `MAL-2024-${String(i).padStart(5, '0')}.json`,
    JSON.stringify(malRecord(`MAL-2024-${String(i).padStart(5, '0')}`, 'npm', `filler-${i}`)),
  ]),
)
const before = zipOf({ ...first, ...fillers })
const after = zipOf({ ...refreshed(), ...fillers })

let feed: OsvFeed
beforeAll(async () => {
  feed = await startOsvFeed()
})
afterAll(async () => {
  await feed.close()
})
afterEach(() => {
  feed.serveRanges(true)
  feed.onRequest(null)
})

const request = (): FeedRequest => ({
  url: `${feed.url}/npm/all.zip`,
  validators: {},
  headersTimeoutMs: 5_000,
  idleTimeoutMs: 5_000,
})

/** The first load of `before`, whole, as the service's first download does it. */
async function firstLoad(): Promise<{ loaded: LoadedArchive; etag?: string }> {
  feed.publish('npm', before)
  const outcome = await downloadArchive(request())
  if (outcome.kind !== 'changed') throw new Error('expected an archive')
  expect(outcome.loaded.ranges).toBe(0)
  return { loaded: outcome.loaded, etag: outcome.etag }
}

async function refresh(previous: LoadedArchive): Promise<LoadedArchive> {
  const outcome = await downloadArchive(request(), { previous: previous.memory })
  if (outcome.kind !== 'changed') throw new Error(`expected an archive, got ${outcome.kind}`)
  return outcome.loaded
}

describe('a refresh by ranges', () => {
  it('reads the last bytes, the directory and the changed entries only, and builds what a full read builds', async () => {
    const { loaded, etag } = await firstLoad()
    const downloads = feed.downloads('npm')
    const asked = feed.requests.length

    // Unchanged: one conditional request, answered 304.
    const same = await downloadArchive({ ...request(), validators: { etag } }, { previous: loaded.memory })
    expect(same.kind).toBe('not-modified')
    expect(feed.requests.slice(asked).map((r) => [r.status, r.ifNoneMatch])).toEqual([[304, etag]])

    feed.publish('npm', after)
    const sent = feed.rangeBytes('npm')
    const incremental = await refresh(loaded)
    const full = await readArchive(chunks(after))
    expect(comparable(incremental)).toEqual(comparable(full))
    expect(incremental.ranges).toBeGreaterThanOrEqual(3)
    expect(feed.downloads('npm')).toBe(downloads)
    // The tail, the directory and a few entries: well under half the archive.
    expect(feed.rangeBytes('npm') - sent).toBeLessThan(after.length / 2)
    expect(feed.requests.slice(-incremental.ranges).every((r) => r.status === 206 && r.range)).toBe(true)
    expect(incremental.index.lookup('npm', 'new-evil', '1.0.0').malware.map((a) => a.id)).toEqual(['MAL-2025-9004'])
    expect(incremental.index.lookup('npm', 'gone-evil', '1.0.0').malware).toEqual([])

    // And the next refresh, from the memory this one left, is as good as one from a full read.
    const next = {
      ...refreshed(),
      ...fillers,
      'MAL-2025-9100.json': JSON.stringify(malRecord('MAL-2025-9100', 'npm', 'later-evil')),
    }
    feed.publish('npm', zipOf(next))
    const again = await refresh(incremental)
    expect(comparable(again)).toEqual(comparable(await readArchive(chunks(zipOf(next)))))
    expect(again.ranges).toBeGreaterThanOrEqual(3)
  })

  it('reads the archive whole when the server does not answer ranges', async () => {
    const { loaded } = await firstLoad()
    feed.serveRanges(false)
    feed.publish('npm', after)
    const downloads = feed.downloads('npm')
    const whole = await refresh(loaded)
    expect(whole.ranges).toBe(0)
    expect(feed.downloads('npm')).toBe(downloads + 1)
    expect(comparable(whole)).toEqual(comparable(await readArchive(chunks(after))))
  })

  it('reads the new archive whole when it changes between two ranges', async () => {
    const { loaded } = await firstLoad()
    feed.publish('npm', after)
    const later = {
      ...refreshed(),
      ...fillers,
      'MAL-2025-9200.json': JSON.stringify(malRecord('MAL-2025-9200', 'npm', 'swift-evil')),
    }
    // Published as the first range (the last bytes of `after`) is answered: the next range is refused (412).
    feed.onRequest((r) => {
      if (r.status !== 206) return
      feed.onRequest(null)
      feed.publish('npm', zipOf(later))
    })
    const read = await refresh(loaded)
    expect(feed.requests.some((r) => r.status === 412)).toBe(true)
    expect(read.ranges).toBe(0)
    expect(comparable(read)).toEqual(comparable(await readArchive(chunks(zipOf(later)))))
  })

  it('reads the archive whole when too much of it changed', async () => {
    const { loaded } = await firstLoad()
    const rewritten = Object.fromEntries(
      Object.entries(fillers).map(([name, text]) => [name, text.replace('"introduced":"0"', '"introduced":"1.0.0"')]),
    )
    expect(Object.values(rewritten)).not.toEqual(Object.values(fillers))
    const changed = zipOf({ ...first, ...rewritten })
    feed.publish('npm', changed)
    const read = await refresh(loaded)
    expect(read.ranges).toBe(0)
    expect(comparable(read)).toEqual(comparable(await readArchive(chunks(changed))))
  })

  it('reads the archive whole when a range answers more bytes than it announces', async () => {
    const { loaded } = await firstLoad()
    feed.publish('npm', after)
    // In front of the feed: the ranges after the last bytes and the directory (the entries) get one byte too many.
    let ranges = 0
    const lying = await startLoopback(async (req, res, url) => {
      const range = req.headers.range
      const headers: Record<string, string> = { ...(range ? { range } : {}) }
      for (const name of ['if-none-match', 'if-match'] as const)
        if (req.headers[name]) headers[name] = String(req.headers[name])
      const answer = await fetch(`${feed.url}${url.pathname}`, { headers })
      const body = Buffer.from(await answer.arrayBuffer())
      const pass = ['etag', 'last-modified', 'content-range'].flatMap((name) => {
        const value = answer.headers.get(name)
        return value ? [[name, value]] : []
      })
      const extra = answer.status === 206 && ++ranges > 2 ? Buffer.from('!') : Buffer.alloc(0)
      send(res, answer.status, Buffer.concat([body, extra]), 'application/zip', Object.fromEntries(pass))
    })
    try {
      const outcome = await downloadArchive(
        { ...request(), url: `${lying.url}/npm/all.zip` },
        { previous: loaded.memory },
      )
      if (outcome.kind !== 'changed') throw new Error('expected an archive')
      expect(outcome.loaded.ranges).toBe(0)
      expect(comparable(outcome.loaded)).toEqual(comparable(await readArchive(chunks(after))))
    } finally {
      await lying.close()
    }
  })
})
