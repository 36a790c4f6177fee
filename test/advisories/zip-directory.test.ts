import { describe, expect, it } from 'vitest'
import {
  directoryPlace,
  entryData,
  entryEnds,
  readDirectory,
  ZipDirectoryError,
} from '../../server/advisories/zip-directory'
import { inflateEntry } from '../../server/advisories/zip-stream'
import { first, zipOf } from '../support/osv-archives'

/** The same archive with a zip64 end record, locator and a plain end record of 0xFFFF... fields. */
function asZip64(zip: Buffer): Buffer {
  const end = zip.length - 22
  expect(zip.readUInt32LE(end)).toBe(0x06054b50)
  const entries = zip.readUInt16LE(end + 10)
  const size = zip.readUInt32LE(end + 12)
  const offset = zip.readUInt32LE(end + 16)
  const record = Buffer.alloc(56)
  record.writeUInt32LE(0x06064b50, 0)
  record.writeBigUInt64LE(44n, 4)
  record.writeUInt16LE(45, 12)
  record.writeUInt16LE(45, 14)
  record.writeBigUInt64LE(BigInt(entries), 24)
  record.writeBigUInt64LE(BigInt(entries), 32)
  record.writeBigUInt64LE(BigInt(size), 40)
  record.writeBigUInt64LE(BigInt(offset), 48)
  const locator = Buffer.alloc(20)
  locator.writeUInt32LE(0x07064b50, 0)
  locator.writeBigUInt64LE(BigInt(end), 8)
  locator.writeUInt32LE(1, 16)
  const plain = Buffer.alloc(22)
  plain.writeUInt32LE(0x06054b50, 0)
  plain.writeUInt16LE(0xffff, 8)
  plain.writeUInt16LE(0xffff, 10)
  plain.writeUInt32LE(0xffffffff, 12)
  plain.writeUInt32LE(0xffffffff, 16)
  return Buffer.concat([zip.subarray(0, end), record, locator, plain])
}

const zip = Buffer.from(zipOf(first))

describe('the central directory of an archive', () => {
  it('lists every entry with its header and where its bytes are', () => {
    const place = directoryPlace(zip.subarray(zip.length - 1000), zip.length)
    const directory = readDirectory(zip.subarray(place.offset, place.offset + place.size), place)
    const names = Array.from({ length: directory.count }, (_, i) => directory.name(i))
    expect(names).toEqual(Object.keys(first))
    const ends = entryEnds(directory, place.offset)
    names.forEach((name, i) => {
      const start = directory.localOffset[i]
      expect(directory.header(i)).toMatchObject({ name, descriptor: false })
      const data = inflateEntry(
        entryData(zip.subarray(start, ends[i]), start, directory, i),
        directory.method[i],
        1 << 20,
      )
      expect(Buffer.from(data as Uint8Array).toString('utf8')).toBe(first[name])
    })
  })

  it('reads a zip64 end record as the plain one', () => {
    const wide = asZip64(zip)
    const plain = directoryPlace(zip.subarray(zip.length - 200), zip.length)
    expect(directoryPlace(wide.subarray(wide.length - 200), wide.length)).toEqual(plain)
    // Its zip64 record must be within the bytes read.
    expect(() => directoryPlace(wide.subarray(wide.length - 30), wide.length)).toThrow(ZipDirectoryError)
  })

  it('refuses what is not a directory: no end record, a count that disagrees, a local header elsewhere', () => {
    expect(() => directoryPlace(zip.subarray(0, 200), zip.length + 5000)).toThrow(ZipDirectoryError)
    const place = directoryPlace(zip.subarray(zip.length - 1000), zip.length)
    const directory = zip.subarray(place.offset, place.offset + place.size)
    expect(() => readDirectory(directory, { ...place, entries: place.entries + 1 })).toThrow(/end record says/)
    expect(() => readDirectory(directory.subarray(1), place)).toThrow(ZipDirectoryError)
    const entries = readDirectory(directory, place)
    entries.localOffset[0] += 1
    expect(() => entryData(zip, 0, entries, 0)).toThrow(/no local header/)
  })
})
