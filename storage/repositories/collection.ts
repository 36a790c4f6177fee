import type { Backend, TxWrites } from '../backend'
import type { ChangeAnnouncement } from '../ports'
import { mapOf, recordOf } from '../own'

/** The stored shape of a collection: `{ "items": { "<id>": item } }` (kept for existing data). */
interface StoredCollection<T> {
  items: Record<string, T>
}

/**
 * The items of a stored collection document as a Map. Ids are client-given (`constructor`,
 * `valueOf` are valid ids), so items are never looked up on the plain object, where
 * Object.prototype's members would answer for ids that are not there. An entry that is not an
 * item filed under its own id (what `PUT /teams/valueOf` once stored) is left out, so such a
 * document reads, and is rewritten on the next change, without it.
 */
export function collectionItems<T extends { id: string }>(doc: unknown): Map<string, T> {
  const items = mapOf<T>((doc as Partial<StoredCollection<T>> | null)?.items)
  for (const [id, item] of items) if (item === null || typeof item !== 'object' || item.id !== id) items.delete(id)
  return items
}

/**
 * A small collection kept as one document (teams, license sets, users of a namespace):
 * reads are one GET, and every change is one atomic read-modify-write.
 */
export class CollectionDocument<T extends { id: string }> {
  /**
   * `announce`: the change each update announces (`TxWrites.announce`), for a document processes
   * keep (teams: authentication reads them); this process's listeners hear of it at the commit.
   */
  constructor(
    private readonly backend: Pick<Backend, 'keyValue'>,
    private readonly key: string,
    private readonly options: { announce?: ChangeAnnouncement } = {},
  ) {}

  async all(): Promise<T[]> {
    return [...collectionItems<T>(await this.backend.keyValue.get<StoredCollection<T>>(this.key)).values()]
  }

  async find(id: string): Promise<T | null> {
    return collectionItems<T>(await this.backend.keyValue.get<StoredCollection<T>>(this.key)).get(id) ?? null
  }

  /**
   * Runs `change` on a copy of the current items; it returns the new items (or throws to abort)
   * plus anything else to write atomically (events, logs). Items of `null` mean nothing changed:
   * nothing is written or announced, so what other processes keep of the document stays (a
   * provider sign-in that changes no membership ended every process's token lookups).
   */
  async update<R>(
    change: (items: Map<string, T>) => { items: Map<string, T> | null; result: R; also?: TxWrites },
  ): Promise<R> {
    return this.backend.keyValue.transact([this.key], (values) => {
      const { items, result, also } = change(collectionItems<T>(values.get(this.key)))
      if (items === null) return { writes: { ...also }, result }
      const stored: StoredCollection<T> = { items: recordOf(items) }
      const announce = this.options.announce === undefined ? {} : { announce: this.options.announce }
      return { writes: { ...also, set: { ...also?.set, [this.key]: stored }, ...announce }, result }
    })
  }
}
