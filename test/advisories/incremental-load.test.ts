import { strToU8, Zip, ZipDeflate, zipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { readArchive, type LoadedArchive } from '../../server/advisories/archive-read'
import { threadLoader } from '../../server/advisories/archive-loader'
import { decodeSnapshot } from '../../server/firewall/advisories/snapshot'
import { ZipReadError } from '../../server/firewall/advisories/zip-stream'
import { fixtureRecords, malRecord } from '../support/osv-feed'

/** The bytes as a stream of chunks of `size`, the way an HTTP body arrives. */
async function* chunks(bytes: Uint8Array, size = 1000): AsyncIterable<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size)
}

type Files = Record<string, string>

const npm = fixtureRecords('npm')
const asFiles = (records: Record<string, unknown>[]): Files =>
  Object.fromEntries(records.map((record) => [`${record.id}.json`, JSON.stringify(record)]))

/** The first archive: the fixtures (29 records, 2 withdrawn), bad entries, a duplicate id and a non-record. */
const first: Files = {
  ...asFiles(npm),
  'broken.json': '{"id": "GHSA-trunc',
  'nameless.json': JSON.stringify({ id: 'GHSA-name-less-pkg0', affected: [{ package: { ecosystem: 'npm' } }] }),
  // Same id as a fixture record earlier in the archive: ignored by the index.
  'again.json': JSON.stringify(malRecord('MAL-2022-1142', 'npm', 'flatmap-stream')),
  'README.txt': 'not a record',
  ...asFiles([malRecord('MAL-2025-9001', 'npm', 'old-evil'), malRecord('MAL-2025-9002', 'npm', 'gone-evil')]),
}

/** The refreshed archive: two records gone, one modified, an invalid entry fixed, one broken, two added. */
function refreshed(): Files {
  const files = { ...first }
  delete files['MAL-2025-9002.json']
  delete files['GHSA-35jh-r3h4-6jhm.json']
  files['MAL-2025-9001.json'] = JSON.stringify(malRecord('MAL-2025-9001', 'npm', 'old-evil', ['1.0.0', '1.0.1']))
  files['broken.json'] = JSON.stringify(malRecord('MAL-2025-9003', 'npm', 'mended-evil'))
  files['GHSA-29mw-wpgm-hmr9.json'] = '{"id": "GHSA-29mw-wpgm-hmr9", "affected": ['
  files['MAL-2025-9004.json'] = JSON.stringify(malRecord('MAL-2025-9004', 'npm', 'new-evil'))
  files['zz-late.json'] = JSON.stringify(malRecord('MAL-2025-9005', 'npm', 'late-evil', ['2.0.0']))
  return files
}

/** Entries of `after` with the same bytes as in `before` (the ones a refresh may pass over). */
const unchanged = (before: Files, after: Files) => Object.keys(after).filter((name) => before[name] === after[name])

/** An all.zip as OSV writes it: sizes and CRC in every local header. */
const zipOf = (files: Files) => zipSync(Object.fromEntries(Object.entries(files).map(([n, t]) => [n, strToU8(t)])))

/** A zip as streaming writers make it: every entry with a data descriptor, sizes not in its header. */
function streamedZip(files: Files): Uint8Array {
  const parts: Uint8Array[] = []
  const zip = new Zip((error, chunk) => {
    if (error) throw error
    parts.push(chunk)
  })
  for (const [name, text] of Object.entries(files)) {
    const entry = new ZipDeflate(name, { level: 6 })
    zip.add(entry)
    entry.push(strToU8(text), true)
  }
  zip.end()
  return Buffer.concat(parts)
}

const bytes = (views: Uint8Array[]) =>
  Buffer.concat(views.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)))
const numbers = (view: ArrayLike<number>) => Array.from(view)

/** Everything a load hands out, in comparable form: index data, figures, snapshot and memory. */
function comparable(loaded: LoadedArchive) {
  const { data } = loaded.index
  const { memory } = loaded
  return {
    figures: [loaded.records, loaded.invalid, loaded.withdrawn, loaded.warnings],
    lines: bytes(data.chunks).toString('utf8'),
    offsets: [data.chunkOf, data.startOf, data.lengthOf].map(numbers),
    table: [data.slots, data.slotHash].map(numbers),
    perEcosystem: data.perEcosystem,
    snapshot: Buffer.from(loaded.snapshot).toString('base64'),
    memory: {
      names: Buffer.from(bytes([memory.names])).toString('utf8'),
      entries: [memory.nameEnd, memory.crc32, memory.compressedSize, memory.size, memory.outcome].map(numbers),
      reasons: [...memory.reasons],
      facts: [memory.facts.idHash, memory.facts.ecosystems, memory.facts.keyStart, memory.facts.keyHash].map(numbers),
    },
  }
}

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
    expect(comparable(mixed).lines).toBe(comparable(full).lines)
  })

  it('on the loader thread: a corrupt refresh fails and leaves the old index and memory usable', async () => {
    const loader = threadLoader()
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
