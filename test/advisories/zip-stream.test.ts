import { strToU8, Zip, ZipDeflate, ZipPassThrough, zipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { readZipStream, ZipReadError, type ZipEntry } from '../../server/advisories/zip-stream'

/** The archive in chunks of `size` bytes, as a download hands them over. */
async function* chunks(bytes: Uint8Array, size = 1000): AsyncIterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size)
}

const files = Object.fromEntries(
  Array.from({ length: 40 }, (_, i) => [
    `rec-${i}.json`,
    JSON.stringify({ id: `GHSA-${i}`, text: 'x'.repeat(i * 37) }),
  ]),
)

/** A zip as streaming writers make it: every entry with a data descriptor after its bytes. */
function streamedZip(stored = false): Uint8Array {
  const parts: Uint8Array[] = []
  const zip = new Zip((error, chunk) => {
    if (error) throw error
    parts.push(chunk)
  })
  for (const [name, text] of Object.entries(files)) {
    const entry = stored ? new ZipPassThrough(name) : new ZipDeflate(name, { level: 6 })
    zip.add(entry)
    entry.push(strToU8(text), true)
  }
  zip.end()
  return Buffer.concat(parts)
}

async function read(bytes: Uint8Array, size?: number, maxEntryBytes?: number) {
  const entries: ZipEntry[] = []
  const result = await readZipStream(chunks(bytes, size), (entry) => entries.push(entry), { maxEntryBytes })
  return { result, texts: Object.fromEntries(entries.map((e) => [e.name, Buffer.from(e.data).toString('utf8')])) }
}

describe('reading a zip as a stream', () => {
  it('reads entries with sizes in their headers, whatever the chunk boundaries', async () => {
    const bytes = zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)])))
    for (const size of [1, 7, 4096]) {
      const { result, texts } = await read(bytes, size)
      expect(result).toEqual({ entries: 40, unreadable: 0, problems: [] })
      expect(texts).toEqual(files)
    }
  })

  it('reads entries written with data descriptors, deflated or stored', async () => {
    for (const stored of [false, true]) {
      for (const size of [3, 5000]) {
        const { result, texts } = await read(streamedZip(stored), size)
        expect(result.entries).toBe(40)
        expect(texts).toEqual(files)
      }
    }
  })

  it('reads stored entries', async () => {
    const bytes = zipSync(
      { 'a.json': strToU8('{"a":1}'), 'dir/': new Uint8Array(0), 'b.json': strToU8('{"b":2}') },
      { level: 0 },
    )
    const { result, texts } = await read(bytes, 2)
    // The directory counts as read but is not handed out.
    expect(result.entries).toBe(3)
    expect(texts).toEqual({ 'a.json': '{"a":1}', 'b.json': '{"b":2}' })
  })

  it('skips and counts an entry over the size limit, and reads the rest', async () => {
    const big = 'y'.repeat(5000)
    const bytes = zipSync(
      { 'small.json': strToU8('{}'), 'big.json': strToU8(big), 'last.json': strToU8('[]') },
      { level: 0 },
    )
    const { result, texts } = await read(bytes, 100, 1000)
    expect(result.unreadable).toBe(1)
    expect(result.problems[0]).toContain('big.json: larger than 1000 bytes')
    expect(texts).toEqual({ 'small.json': '{}', 'last.json': '[]' })
  })

  it('refuses an archive cut inside a data-descriptor entry', async () => {
    const bytes = streamedZip()
    await expect(read(bytes.subarray(0, Math.floor(bytes.length / 2)))).rejects.toBeInstanceOf(ZipReadError)
  })
})
