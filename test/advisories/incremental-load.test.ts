import { describe, expect, it } from 'vitest'
import { readArchive, type LoadedArchive } from '../../server/advisories/archive-read'
import { loaderThread } from '../support/loader-thread'
import { decodeSnapshot } from '../../server/advisories/snapshot'
import { ZipReadError } from '../../server/advisories/zip-stream'
import { chunks, comparable, first, refreshed, streamedZip, unchanged, zipOf } from '../support/osv-archives'

const malwareOf = (loaded: LoadedArchive, name: string, version: string) =>
  loaded.index.lookup('npm', name, version).malware.map((a) => a.id)

describe('a refresh that reads only what changed', () => {
  it('builds the index, figures, snapshot and memory a full load of the same archive builds', async () => {
    const before = await readArchive(chunks(zipOf(first), 777))
    expect([before.records, before.invalid, before.withdrawn, before.reused]).toEqual([31, 2, 2, 0])
    const after = refreshed()
    const full = await readArchive(chunks(zipOf(after), 555))
    const incremental = await readArchive(chunks(zipOf(after), 333), undefined, before.memory)

    expect(comparable(incremental)).toEqual(comparable(full))
    // Every unchanged entry but the duplicate id (never remembered: it is read again) was passed over.
    expect(incremental.reused).toBe(unchanged(first, after).length - 1)
    expect(full.reused).toBe(0)
    expect([incremental.records, incremental.invalid, incremental.withdrawn]).toEqual([31, 2, 2])
    expect(incremental.warnings.map((w) => w.split(':')[0])).toEqual(['GHSA-29mw-wpgm-hmr9.json', 'nameless.json'])
    expect(malwareOf(incremental, 'gone-evil', '1.0.0')).toEqual([])
    expect(malwareOf(incremental, 'old-evil', '9.9.9')).toEqual([])
    expect(malwareOf(incremental, 'old-evil', '1.0.1')).toEqual(['MAL-2025-9001'])
    expect(malwareOf(incremental, 'mended-evil', '1.0.0')).toEqual(['MAL-2025-9003'])
    expect(malwareOf(incremental, 'flatmap-stream', '0.1.1')).toEqual(['MAL-2022-1142'])
    expect(incremental.index.lookup('npm', 'lodash', '4.17.11')).toEqual(full.index.lookup('npm', 'lodash', '4.17.11'))
    const back = await decodeSnapshot(incremental.snapshot)
    expect(back.size).toBe(31)

    // A second refresh from the incremental load's memory: nothing changed, nothing read.
    const again = await readArchive(chunks(zipOf(after)), undefined, incremental.memory)
    expect(comparable(again)).toEqual(comparable(full))
    expect(again.reused).toBe(Object.keys(after).length - 1)
  })

  it("keeps unchanged lines in the previous index's chunks, until a quarter of their bytes are unused", async () => {
    const sharedWith = (a: LoadedArchive, b: LoadedArchive) =>
      a.index.data.chunks.filter((chunk) => b.index.data.chunks.some((other) => other.buffer === chunk.buffer)).length
    const wasted = (loaded: LoadedArchive) => {
      const held = loaded.index.data.chunks.reduce((sum, chunk) => sum + chunk.length, 0)
      return 1 - loaded.index.data.lengthOf.reduce((sum, length) => sum + length, 0) / held
    }
    const before = await readArchive(chunks(zipOf(first)))
    expect(wasted(before)).toBe(0)
    // Most records gone: the rest stay where they were, in a chunk now mostly unused.
    const fewer = Object.fromEntries(Object.entries(first).filter(([name]) => !name.startsWith('GHSA-')))
    const thinned = await readArchive(chunks(zipOf(fewer)), undefined, before.memory)
    expect(sharedWith(thinned, before)).toBeGreaterThan(0)
    expect(wasted(thinned)).toBeGreaterThan(0.25)
    expect(comparable(thinned)).toEqual(comparable(await readArchive(chunks(zipOf(fewer)))))
    // The next refresh copies them out and leaves the waste behind.
    const compacted = await readArchive(chunks(zipOf(fewer)), undefined, thinned.memory)
    expect(compacted.reused).toBe(Object.keys(fewer).length - 1)
    expect(sharedWith(compacted, thinned)).toBe(0)
    expect(wasted(compacted)).toBe(0)
    expect(comparable(compacted)).toEqual(comparable(thinned))
  })

  it('reads every entry written with a data descriptor, and still gives what a full load gives', async () => {
    const before = await readArchive(chunks(streamedZip(first)))
    const after = refreshed()
    const full = await readArchive(chunks(streamedZip(after), 400))
    const incremental = await readArchive(chunks(streamedZip(after), 401), undefined, before.memory)
    expect(incremental.reused).toBe(0)
    expect(comparable(incremental)).toEqual(comparable(full))
    // Remembered entries of a plain zip do not match those of a streamed one: still all read.
    const plain = await readArchive(chunks(zipOf(first)))
    const mixed = await readArchive(chunks(streamedZip(after)), undefined, plain.memory)
    expect(mixed.reused).toBe(0)
    expect(comparable(mixed).lines).toEqual(comparable(full).lines)
  })

  it('on the loader thread: a corrupt refresh fails and leaves the old index and memory usable', async () => {
    const loader = loaderThread()
    expect(loader).not.toBeNull()
    const before = await loader!.archive(chunks(zipOf(first), 777))
    expect(malwareOf(before, 'gone-evil', '1.0.0')).toEqual(['MAL-2025-9002'])
    const after = zipOf(refreshed())
    await expect(
      loader!.archive(chunks(after.subarray(0, after.length >> 1)), undefined, before.memory),
    ).rejects.toThrow(/zip/)
    await expect(
      readArchive(chunks(after.subarray(0, after.length >> 1)), undefined, before.memory),
    ).rejects.toBeInstanceOf(ZipReadError)
    expect(malwareOf(before, 'gone-evil', '1.0.0')).toEqual(['MAL-2025-9002'])

    const incremental = await loader!.archive(chunks(after, 999), undefined, before.memory)
    const full = await readArchive(chunks(after))
    expect(incremental.reused).toBe(unchanged(first, refreshed()).length - 1)
    expect(comparable(incremental)).toEqual(comparable(full))
  })
})
