/**
 * Advisory data never silently shrinks (CONTRACT section 8): a load that would replace the data
 * served with much less of it, or that skipped too many entries as invalid, is refused and the
 * data loaded before stays. Pure: figures in, the reason out.
 */

/** Most entries (or directory records) one archive may hold: `ADVISORY_MAX_ENTRIES` (default). */
export const DEFAULT_MAX_ADVISORY_ENTRIES = 500_000

/** Largest share of invalid entries a load may skip (1 %). */
export const MAX_INVALID_SHARE = 0.01

/** The figures of a load: valid records kept, entries skipped as invalid, withdrawn records. */
export interface LoadFigures {
  records: number
  invalid: number
  withdrawn: number
}

/**
 * Why the load must not replace the data served, or null when it may. `previousRecords`: the
 * records of the data it would replace (null or 0: there is none). `emptyRefused`: an archive
 * with no valid record is refused even when nothing is loaded yet (a directory may be empty).
 * @example refreshRefusal({ records: 0, invalid: 0, withdrawn: 0 }, 120, true) // 'the archive holds no valid record ...'
 */
export function refreshRefusal(
  load: LoadFigures,
  previousRecords: number | null,
  emptyRefused: boolean,
): string | null {
  const entries = load.records + load.invalid + load.withdrawn
  if (emptyRefused && load.records === 0) return `refused: the archive holds no valid record (${entries} entries read)`
  if (load.invalid > entries * MAX_INVALID_SHARE) {
    return `refused: ${load.invalid} of ${entries} entries are invalid (more than ${MAX_INVALID_SHARE * 100} %)`
  }
  if (previousRecords && load.records * 2 < previousRecords) {
    return `refused: ${load.records} valid records would replace ${previousRecords} (fewer than half)`
  }
  return null
}

/** A load refused by `refreshRefusal`; its message is the status's `lastError`. */
export class RefreshRefused extends Error {}
