import { describe, expect, it } from 'vitest'
import { nuspecOf, readZipEntry } from '../../server/registry/nuget/nupkg'
import { nupkg } from '../fixtures/ecosystems/packages'
import { zip } from '../fixtures/ecosystems/zip'

/** Offset of the central-directory header naming `name` (signature 0x02014b50). */
function centralHeader(bytes: Buffer, name: string): number {
  for (let at = bytes.length - 46; at >= 0; at--) {
    if (bytes.readUInt32LE(at) !== 0x02014b50) continue
    if (bytes.subarray(at + 46, at + 46 + bytes.readUInt16LE(at + 28)).toString() === name) return at
  }
  throw new Error(`no central header for ${name}`)
}

describe('nupkg reading (fflate)', () => {
  it('reads id, version and license expression from the root nuspec', () => {
    expect(nuspecOf(nupkg('Acme.Lib', '1.2.0', 'Apache-2.0'))).toEqual({
      id: 'Acme.Lib',
      version: '1.2.0',
      license: 'Apache-2.0',
    })
  })

  it('ignores a nuspec below the root and answers null for bytes that are not a zip', () => {
    expect(nuspecOf(zip({ 'lib/Acme.nuspec': '<id>A</id><version>1.0.0</version>' }))).toBeNull()
    expect(nuspecOf(Buffer.from('not a zip at all, just text long enough to scan'))).toBeNull()
  })

  it('refuses an entry larger than the limit once inflated', () => {
    const bytes = zip({ 'big.txt': Buffer.alloc(64 * 1024, 0x61) })
    expect(readZipEntry(bytes, (name) => name === 'big.txt', 1024)).toBeNull()
    expect(readZipEntry(bytes, (name) => name === 'big.txt', 64 * 1024)?.length).toBe(64 * 1024)
  })

  it('never inflates past the declared size, whatever the compressed data holds', () => {
    const bytes = zip({ 'bomb.txt': Buffer.alloc(1024 * 1024, 0x61) })
    // The central directory claims 100 bytes for an entry that inflates to 1 MiB.
    bytes.writeUInt32LE(100, centralHeader(bytes, 'bomb.txt') + 24)
    let entry: Buffer | null
    try {
      entry = readZipEntry(bytes, (name) => name === 'bomb.txt', 1024)
    } catch {
      entry = null // fflate may also refuse the mismatch outright: either way nothing large is made
    }
    expect(entry === null || entry.length <= 100).toBe(true)
  })
})
