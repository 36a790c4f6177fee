const ZIP64_EXTRA = 0x0001

/** Which fixed fields hold 0xFFFFFFFF, so that their value is in the zip64 extra field. */
export interface Zip64Wanted {
  size: boolean
  compressedSize: boolean
  offset?: boolean
}

/**
 * The zip64 values of an extra field (APPNOTE 4.5.3) for the fields `wanted` names, in the order
 * the field holds them: uncompressed size, compressed size, local header offset. `fail` makes the
 * caller's error for a field that is missing or too short.
 * @example const { size } = zip64Values(extra, { size: true, compressedSize: false }, (m) => new ZipFormatError(m))
 */
export function zip64Values(
  extra: Buffer,
  wanted: Zip64Wanted,
  fail: (message: string) => Error,
): { size?: number; compressedSize?: number; offset?: number } {
  for (let at = 0; at + 4 <= extra.length;) {
    const id = extra.readUInt16LE(at)
    const length = extra.readUInt16LE(at + 2)
    if (id === ZIP64_EXTRA) {
      let field = at + 4
      const next = () => {
        if (field + 8 > at + 4 + length) throw fail('zip64 extra field is too short')
        const value = Number(extra.readBigUInt64LE(field))
        field += 8
        return value
      }
      return {
        size: wanted.size ? next() : undefined,
        compressedSize: wanted.compressedSize ? next() : undefined,
        offset: wanted.offset ? next() : undefined,
      }
    }
    at += 4 + length
  }
  throw fail('zip64 sizes without a zip64 extra field')
}
