import { inflateRawSync } from 'node:zlib'

/** What a push needs from a package: its identity and declared license. */
export interface NuspecFacts {
  id: string
  version: string
  /** `<license type="expression">`, the SPDX form NuGet supports. */
  license?: string
}

/**
 * The bytes of the first root-level entry whose name satisfies `wanted`, read through the
 * zip central directory (stored or deflated entries). Null when the bytes are not a zip or
 * hold no such entry.
 */
export function readZipEntry(zip: Buffer, wanted: (name: string) => boolean, limit = 16 * 1024 * 1024): Buffer | null {
  // The end-of-central-directory record sits in the last 64 KiB + 22 bytes.
  let eocd = -1
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i
      break
    }
  }
  if (eocd < 0) return null
  const entries = zip.readUInt16LE(eocd + 10)
  let at = zip.readUInt32LE(eocd + 16)
  for (let n = 0; n < entries && at + 46 <= zip.length; n++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) return null
    const method = zip.readUInt16LE(at + 10)
    const size = zip.readUInt32LE(at + 20)
    const nameLength = zip.readUInt16LE(at + 28)
    const next = at + 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32)
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8')
    if (wanted(name)) {
      const local = zip.readUInt32LE(at + 42)
      if (zip.readUInt32LE(local) !== 0x04034b50) return null
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28)
      const data = zip.subarray(start, start + size)
      if (method === 0) return data
      if (method === 8) return inflateRawSync(data, { maxOutputLength: limit })
      return null
    }
    at = next
  }
  return null
}

const element = (xml: string, name: string) => new RegExp(`<${name}(\\s[^>]*)?>([^<]*)</${name}>`, 'i').exec(xml)

/**
 * Reads id, version and license expression from the `.nuspec` at the root of a `.nupkg`.
 * @example nuspecOf(nupkgBytes) // { id: 'Acme.Lib', version: '1.0.0', license: 'MIT' }
 */
export function nuspecOf(nupkg: Buffer): NuspecFacts | null {
  let entry: Buffer | null
  try {
    entry = readZipEntry(nupkg, (name) => !name.includes('/') && name.toLowerCase().endsWith('.nuspec'))
  } catch {
    return null
  }
  if (!entry) return null
  const xml = entry.toString('utf8')
  const id = element(xml, 'id')?.[2].trim()
  const version = element(xml, 'version')?.[2].trim()
  if (!id || !version) return null
  const license = element(xml, 'license')
  const expression = license && /type\s*=\s*["']expression["']/i.test(license[1] ?? '') ? license[2].trim() : undefined
  return { id, version, ...(expression ? { license: expression } : {}) }
}
