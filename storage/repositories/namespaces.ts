import type { Backend } from '../backend'
import type { NamespaceRecord, UserRecord, UserSource } from '../model/namespace'
import { mapOf, recordOf } from '../own'
import { CollectionDocument, collectionItems } from './collection'
import { keys } from './keys'

interface NamespaceIndex {
  items: Record<string, true>
}

/** Enters namespace ids in the index (keys.namespaceIndex); ids already there stay as they are. */
export function addToNamespaceIndex(backend: Pick<Backend, 'keyValue'>, ids: string[]): Promise<number> {
  return backend.keyValue.transact([keys.namespaceIndex], (values) => {
    // A Map: `constructor` is a namespace id a client may choose.
    const index = mapOf<true>((values.get(keys.namespaceIndex) as NamespaceIndex | null)?.items)
    const added = ids.filter((id) => !index.has(id))
    if (added.length === 0) return { writes: {}, result: 0 }
    for (const id of added) index.set(id, true)
    return { writes: { set: { [keys.namespaceIndex]: { items: recordOf(index) } } }, result: added.length }
  })
}

export class NamespaceRepository {
  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  get(ns: string): Promise<NamespaceRecord | null> {
    return this.backend.keyValue.get<NamespaceRecord>(keys.namespace(ns))
  }

  users(ns: string): CollectionDocument<UserRecord> {
    return new CollectionDocument<UserRecord>(this.backend, keys.users(ns))
  }

  /**
   * Creates the namespace with its owner; false when it already exists. The index lies outside
   * the namespace (another Redis Cluster slot), so it is written first: a crash in between leaves
   * an id whose namespace is missing, which `ids()` skips.
   */
  async create(record: NamespaceRecord, ownerSource: UserSource = 'admin'): Promise<boolean> {
    await addToNamespaceIndex(this.backend, [record.id])
    return this.backend.keyValue.transact([keys.namespace(record.id), keys.users(record.id)], (values) => {
      if (values.get(keys.namespace(record.id))) return { writes: {}, result: false }
      const users = collectionItems<UserRecord>(values.get(keys.users(record.id)))
      users.set(record.owner, { id: record.owner, createdAt: record.createdAt, source: ownerSource })
      return {
        writes: { set: { [keys.namespace(record.id)]: record, [keys.users(record.id)]: { items: recordOf(users) } } },
        result: true,
      }
    })
  }

  /** Every namespace id, from the index (one read, then one for the namespaces' records). */
  async ids(): Promise<string[]> {
    const ids = [...mapOf<true>((await this.backend.keyValue.get<NamespaceIndex>(keys.namespaceIndex))?.items).keys()]
    const records = await this.backend.keyValue.getMany(ids.map((id) => keys.namespace(id)))
    return ids.filter((_, index) => records[index] !== null)
  }

  async isEmpty(): Promise<boolean> {
    return (await this.ids()).length === 0
  }
}
