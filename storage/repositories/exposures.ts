import type { Backend } from '../backend'
import type { StoredEvent } from '../model/events'
import type { ExposureIndexEntry, ExposureRecord } from '../model/inventory'
import { mapOf, recordOf } from '../own'
import { keys } from './keys'

export type { ExposureIndexEntry, ExposureRecord } from '../model/inventory'

interface StoredExposureIndex {
  items: Record<string, ExposureIndexEntry>
}

/** Exposures written per transaction. */
const EXPOSURES_PER_WRITE = 100

const indexEntry = (record: ExposureRecord): ExposureIndexEntry => ({
  firewall: record.firewall,
  status: record.status,
  detectedAt: record.detectedAt,
})

/**
 * A namespace's exposures. Each is written only where absent (`recordNew`), with its event, in one
 * transaction: a second detection of the same one, by a restart or another process, writes nothing
 * and emits nothing.
 */
export class ExposureRepository<E extends StoredEvent = StoredEvent> {
  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  /**
   * Stores each exposure whose id is not stored yet, and appends the event `eventOf` makes for it
   * in the same write. Returns the exposures stored now.
   */
  async recordNew(
    ns: string,
    found: ExposureRecord[],
    eventOf: (record: ExposureRecord) => E,
  ): Promise<ExposureRecord[]> {
    const stored: ExposureRecord[] = []
    const indexKey = keys.exposureIndex(ns)
    for (let start = 0; start < found.length; start += EXPOSURES_PER_WRITE) {
      const chunk = found.slice(start, start + EXPOSURES_PER_WRITE)
      const exposureKeys = chunk.map((record) => keys.exposure(ns, record.id))
      const fresh = await this.backend.keyValue.transact([indexKey, ...exposureKeys], (values) => {
        const items = mapOf<ExposureIndexEntry>((values.get(indexKey) as StoredExposureIndex | null)?.items)
        const added = chunk.filter((record, i) => values.get(exposureKeys[i]) == null && !items.has(record.id))
        if (added.length === 0) return { writes: {}, result: added }
        const set: Record<string, unknown> = {}
        for (const record of added) {
          set[keys.exposure(ns, record.id)] = record
          items.set(record.id, indexEntry(record))
        }
        set[indexKey] = { items: recordOf(items) } satisfies StoredExposureIndex
        return { writes: { set, events: added.map(eventOf) }, result: added }
      })
      stored.push(...fresh)
    }
    return stored
  }

  /** Every exposure's id with its index entry (firewall, status, detection time). */
  async index(ns: string): Promise<Map<string, ExposureIndexEntry>> {
    const doc = await this.backend.keyValue.get<StoredExposureIndex>(keys.exposureIndex(ns))
    return mapOf<ExposureIndexEntry>(doc?.items)
  }

  get(ns: string, id: string): Promise<ExposureRecord | null> {
    return this.backend.keyValue.get<ExposureRecord>(keys.exposure(ns, id))
  }

  getMany(ns: string, ids: readonly string[]): Promise<(ExposureRecord | null)[]> {
    if (ids.length === 0) return Promise.resolve([])
    return this.backend.keyValue.getMany<ExposureRecord>(ids.map((id) => keys.exposure(ns, id)))
  }

  /**
   * Changes one exposure with `change` (which may throw to refuse), its index entry with it, and
   * appends `events` (an audit) in the same write. Null when it does not exist.
   */
  async update(
    ns: string,
    id: string,
    change: (record: ExposureRecord) => { record: ExposureRecord; events?: E[] },
  ): Promise<ExposureRecord | null> {
    const key = keys.exposure(ns, id)
    const indexKey = keys.exposureIndex(ns)
    return this.backend.keyValue.transact([key, indexKey], (values) => {
      const current = values.get(key) as ExposureRecord | null
      if (!current) return { writes: {}, result: null }
      const { record, events } = change(current)
      const items = mapOf<ExposureIndexEntry>((values.get(indexKey) as StoredExposureIndex | null)?.items)
      items.set(id, indexEntry(record))
      return {
        writes: { set: { [key]: record, [indexKey]: { items: recordOf(items) } }, events },
        result: record,
      }
    })
  }
}
