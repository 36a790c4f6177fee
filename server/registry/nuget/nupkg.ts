import { unzipSync } from 'fflate'

/** What a push needs from a package: its identity and declared license. */
interface NuspecFacts {
  id: string
  version: string
  /** `<license type="expression">`, the SPDX form NuGet supports. */
  license?: string
}

/**
 * The bytes of the first entry whose name satisfies `wanted`, read through the zip central
 * directory with fflate. Null when that entry is larger than `limit` once inflated (its
 * declared size; fflate inflates into a buffer of exactly that size, so a lying header cannot
 * grow it) or when no entry matches; throws when the bytes are not a zip it can read.
 */
export function readZipEntry(zip: Buffer, wanted: (name: string) => boolean, limit = 16 * 1024 * 1024): Buffer | null {
  let chosen: string | null = null
  const files = unzipSync(zip, {
    filter: (file) => {
      if (chosen !== null || !wanted(file.name)) return false
      chosen = file.name
      return file.originalSize <= limit
    },
  })
  const entry = chosen === null ? undefined : files[chosen]
  return entry ? Buffer.from(entry.buffer, entry.byteOffset, entry.byteLength) : null
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
