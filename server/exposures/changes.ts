import { createHash } from 'node:crypto'
import type { Advisory, AdvisoryIndex } from '../advisories/types'

/** Records handled between two yields to the event loop. */
const SLICE = 2_000

const pause = () => new Promise<void>((resolve) => setImmediate(resolve))

function linesOf(index: AdvisoryIndex): Iterable<Uint8Array | string> {
  const packed = index as AdvisoryIndex & { lines?: () => Iterable<Uint8Array> }
  if (typeof packed.lines === 'function') return packed.lines()
  return (function* () {
    for (const advisory of index.all()) yield JSON.stringify(advisory)
  })()
}

const digest = (line: Uint8Array | string) => createHash('sha1').update(line).digest('base64')

/**
 * The advisories of `next` that `previous` did not hold as they are now: new records and changed
 * ones (a record whose text differs). Reads each record's stored line once and parses only the
 * changed ones; it yields to the event loop every few thousand records, so requests go on while a
 * whole feed is compared.
 * @example const changed = await changedAdvisories(oldIndex, newIndex)
 */
export async function changedAdvisories(previous: AdvisoryIndex, next: AdvisoryIndex): Promise<Advisory[]> {
  const before = new Set<string>()
  let n = 0
  for (const line of linesOf(previous)) {
    before.add(digest(line))
    if (++n % SLICE === 0) await pause()
  }
  const changed: Advisory[] = []
  for (const line of linesOf(next)) {
    if (!before.has(digest(line)))
      changed.push(JSON.parse(typeof line === 'string' ? line : Buffer.from(line).toString('utf8')) as Advisory)
    if (++n % SLICE === 0) await pause()
  }
  return changed
}
