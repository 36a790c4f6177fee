import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadOsvZip } from '../../server/advisories/feed-load'
import { decodeSnapshot, encodeSnapshot, SnapshotError } from '../../server/advisories/snapshot'
import { ZipReadError } from '../../server/advisories/zip-stream'
import { loaderThread } from '../support/loader-thread'
import { fixtureRecords, osvZip } from '../support/osv-feed'

/** The bytes as a stream of chunks of `size`, the way an HTTP body arrives. */
async function* chunks(bytes: Uint8Array, size = 1000): AsyncIterable<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size)
}

const npm = fixtureRecords('npm')

describe('loadOsvZip', () => {
  it('indexes every valid record of a streamed all.zip and counts the withdrawn ones', async () => {
    const result = await loadOsvZip(chunks(osvZip(npm), 333))
    expect([result.records, result.withdrawn, result.invalid]).toEqual([29, 2, 0])
    expect(result.index.lookup('npm', 'flatmap-stream', '0.1.1').malware.map((a) => a.id)).toEqual(['MAL-2022-1142'])
  })

  it('counts and skips bad records without failing the load', async () => {
    const bad = {
      'broken.json': '{"id": "GHSA-trunc',
      'GHSA-noin-tro0-duce.json': JSON.stringify({
        id: 'GHSA-noin-tro0-duce',
        affected: [
          { package: { ecosystem: 'npm', name: 'x' }, ranges: [{ type: 'SEMVER', events: [{ fixed: '1' }] }] },
        ],
      }),
      'nameless.json': JSON.stringify({ id: 'GHSA-name-less-pkg0', affected: [{ package: { ecosystem: 'npm' } }] }),
      'twokinds.json': JSON.stringify({
        id: 'GHSA-two0-kind-s000',
        affected: [
          {
            package: { ecosystem: 'npm', name: 'x' },
            ranges: [{ type: 'SEMVER', events: [{ introduced: '0', fixed: '1' }] }],
          },
        ],
      }),
      'README.txt': 'not a record',
    }
    const result = await loadOsvZip(chunks(osvZip(npm, bad)))
    expect([result.records, result.invalid]).toEqual([29, 4])
    expect(result.warnings.join('\n')).toContain('needs an introduced event')
  })

  it('refuses a truncated archive', async () => {
    const bytes = osvZip(npm)
    const truncated = bytes.subarray(0, Math.floor(bytes.length * 0.6))
    await expect(loadOsvZip(chunks(truncated))).rejects.toBeInstanceOf(ZipReadError)
  })

  it('refuses something that is not a zip at all', async () => {
    const html = new TextEncoder().encode('<html><body>503 Service Unavailable</body></html>')
    await expect(loadOsvZip(chunks(html))).rejects.toThrow(/zip/)
  })

  it('refuses an archive whose entries cannot be inflated', async () => {
    const bytes = new Uint8Array(osvZip(npm))
    // Overwrite the middle of the compressed data; headers at both ends stay intact.
    for (let i = Math.floor(bytes.length * 0.1); i < Math.floor(bytes.length * 0.8); i += 7) bytes[i] ^= 0xa5
    await expect(loadOsvZip(chunks(bytes))).rejects.toBeInstanceOf(ZipReadError)
  })
})

describe('snapshots', () => {
  it('round-trips an index through its compressed form', async () => {
    const { index } = await loadOsvZip(chunks(osvZip(npm)))
    const bytes = await encodeSnapshot(index)
    const json = JSON.stringify([...index.all()])
    expect(bytes.length).toBeLessThan(json.length / 3)
    const back = await decodeSnapshot(bytes)
    expect(back.size).toBe(index.size)
    expect(back.lookup('npm', 'lodash', '4.17.11')).toEqual(index.lookup('npm', 'lodash', '4.17.11'))
  })

  it('refuses a damaged snapshot', async () => {
    const { index } = await loadOsvZip(chunks(osvZip(npm)))
    const bytes = await encodeSnapshot(index)
    await expect(decodeSnapshot(bytes.subarray(0, bytes.length - 40))).rejects.toBeInstanceOf(SnapshotError)
    await expect(decodeSnapshot(new TextEncoder().encode('nope'))).rejects.toBeInstanceOf(SnapshotError)
  })
})

describe('loading on a worker thread', () => {
  it('hands back the same index, transferred, and refuses a corrupt archive', async () => {
    const loader = loaderThread()
    expect(loader).not.toBeNull()
    const loaded = await loader!.archive(chunks(osvZip(npm), 777))
    expect([loaded.records, loaded.withdrawn]).toEqual([29, 2])
    expect(loaded.index.lookup('npm', 'lodash', '4.17.11').vulnerabilities).toHaveLength(4)
    const { index: back } = await loader!.snapshot(loaded.snapshot)
    expect(back.lookup('npm', 'flatmap-stream', '0.1.1').malware.map((a) => a.id)).toEqual(['MAL-2022-1142'])
    const zip = osvZip(npm)
    await expect(loader!.archive(chunks(zip.subarray(0, zip.length >> 1)))).rejects.toThrow(/zip/)
    await expect(loader!.snapshot(new Uint8Array([1, 2, 3]))).rejects.toThrow(/snapshot/)
  })

  it.runIf(process.platform === 'linux')(
    'reads at a lower CPU priority (nice 10), the request thread keeps its own',
    async () => {
      /** Threads of this process at nice 10 (field 19 of /proc/self/task/{tid}/stat). */
      const lowest = () =>
        readdirSync('/proc/self/task').filter((tid) => {
          try {
            return readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16] === '10'
          } catch {
            return false // the thread ended meanwhile
          }
        })
      // Threads of the test before may still be ending: only a new one counts.
      const before = new Set(lowest())
      const started = () => lowest().some((tid) => !before.has(tid))
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      const zip = osvZip(npm)
      // The archive's first half, then a wait until the loader thread was seen, then the rest.
      async function* source() {
        yield zip.subarray(0, zip.length >> 1)
        await held
        yield zip.subarray(zip.length >> 1)
      }
      const loading = loaderThread({ lowPriority: true })!.archive(source())
      const deadline = Date.now() + 30_000
      while (!started() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      const seen = started()
      release()
      expect(seen).toBe(true)
      expect((await loading).records).toBe(29)
      expect(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[16]).toBe('0')
    },
  )
})
