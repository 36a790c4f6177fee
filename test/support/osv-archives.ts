import { gunzipSync } from 'node:zlib'
import { strToU8, Zip, ZipDeflate, zipSync } from 'fflate'
import type { LoadedArchive } from '../../server/advisories/archive-read'
import { fixtureRecords, malRecord } from './osv-feed'

/**
 * Feed archives for the refresh tests: a first archive and its refreshed form (records gone,
 * changed, mended, broken and added), written as OSV writes them or as streaming writers do, and
 * a load in comparable form.
 */

/** The bytes as a stream of chunks of `size`, the way an HTTP body arrives. */
export async function* chunks(bytes: Uint8Array, size = 1000): AsyncIterable<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size)
}

export type Files = Record<string, string>

const npm = fixtureRecords('npm')
const asFiles = (records: Record<string, unknown>[]): Files =>
  Object.fromEntries(records.map((record) => [`${record.id}.json`, JSON.stringify(record)]))

/** The first archive: the fixtures (29 records, 2 withdrawn), bad entries, a duplicate id and a non-record. */
export const first: Files = {
  ...asFiles(npm),
  'broken.json': '{"id": "GHSA-trunc',
  'nameless.json': JSON.stringify({ id: 'GHSA-name-less-pkg0', affected: [{ package: { ecosystem: 'npm' } }] }),
  // Same id as a fixture record earlier in the archive: ignored by the index.
  'again.json': JSON.stringify(malRecord('MAL-2022-1142', 'npm', 'flatmap-stream')),
  'README.txt': 'not a record',
  ...asFiles([malRecord('MAL-2025-9001', 'npm', 'old-evil'), malRecord('MAL-2025-9002', 'npm', 'gone-evil')]),
}

/** The refreshed archive: two records gone, one modified, an invalid entry fixed, one broken, two added. */
export function refreshed(): Files {
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
export const unchanged = (before: Files, after: Files) =>
  Object.keys(after).filter((name) => before[name] === after[name])

/** An all.zip as OSV writes it: sizes and CRC in every local header. */
export const zipOf = (files: Files) =>
  zipSync(Object.fromEntries(Object.entries(files).map(([n, t]) => [n, strToU8(t)])))

/** A zip as streaming writers make it: every entry with a data descriptor, sizes not in its header. */
export function streamedZip(files: Files): Uint8Array {
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

/** Everything a load hands out, in comparable form: records, lookup table, figures, snapshot and memory. */
export function comparable(loaded: LoadedArchive) {
  const { data } = loaded.index
  const { memory } = loaded
  return {
    figures: [loaded.records, loaded.invalid, loaded.withdrawn, loaded.warnings],
    // Record by record: a refresh may keep unchanged lines in the previous index's chunks.
    lines: Array.from(loaded.index.lines(), (line) => Buffer.from(line).toString('utf8')),
    table: [data.slots, data.slotHash].map(numbers),
    perEcosystem: data.perEcosystem,
    // The records' text, not the bytes: a refresh reuses compressed blocks of the previous snapshot
    // (and the header line lists the blocks).
    snapshot: gunzipSync(loaded.snapshot).toString('utf8').split('\n').slice(1),
    memory: {
      names: Buffer.from(bytes([memory.names])).toString('utf8'),
      entries: [memory.nameEnd, memory.crc32, memory.compressedSize, memory.size, memory.outcome].map(numbers),
      reasons: [...memory.reasons],
      facts: [memory.facts.idHash, memory.facts.ecosystems, memory.facts.keyStart, memory.facts.keyHash].map(numbers),
    },
  }
}
