import { strFromU8 } from 'fflate'
import { PackedIndexBuilder, type PackedAdvisoryIndex } from './packed-index'
import { parseOsvRecord } from './osv'
import type { Pace } from './pace'
import { readZipStream, type ZipReadOptions } from './zip-stream'

/** A feed archive read into a new index; the figures are what status and logs report. */
interface FeedLoadResult {
  index: PackedAdvisoryIndex
  /** Valid, not withdrawn records indexed. */
  records: number
  /** Records (or archive entries) that were not valid OSV and were skipped. */
  invalid: number
  withdrawn: number
  /** The first few reasons records were skipped. */
  warnings: string[]
}

const MAX_WARNINGS = 20

/**
 * Reads an OSV `all.zip` (one JSON record per entry) from a byte stream into a fresh index,
 * built beside whatever index the caller serves from. Bad records are counted and skipped;
 * an archive that cannot be read throws (`ZipReadError`) and nothing is built.
 * @example const { index, records } = await loadOsvZip(response.body, { pace: pacer() })
 */
export async function loadOsvZip(
  source: AsyncIterable<Uint8Array>,
  options: ZipReadOptions & { pace?: Pace } = {},
): Promise<FeedLoadResult> {
  const builder = new PackedIndexBuilder()
  const warnings: string[] = []
  let invalid = 0
  let withdrawn = 0
  const warn = (text: string) => {
    invalid++
    if (warnings.length < MAX_WARNINGS) warnings.push(text)
  }
  const zip = await readZipStream(
    source,
    (entry) => {
      if (!entry.name.endsWith('.json')) return
      let raw: unknown
      try {
        raw = JSON.parse(strFromU8(entry.data))
      } catch (error) {
        return warn(`${entry.name}: ${(error as Error).message}`)
      }
      const parsed = parseOsvRecord(raw)
      if (parsed.kind === 'advisory') builder.add(parsed.advisory)
      else if (parsed.kind === 'withdrawn') withdrawn++
      else warn(`${entry.name}: ${parsed.error}`)
    },
    options,
  )
  for (const problem of zip.problems) if (warnings.length < MAX_WARNINGS) warnings.push(problem)
  return { index: builder.finish(), records: builder.size, invalid: invalid + zip.unreadable, withdrawn, warnings }
}
