import type { Backend } from '../backend'
import type { NamespaceRecord, UserRecord } from '../../server/namespace/schema'
import { recordOf } from '../../server/common/own'
import { CollectionDocument, collectionItems } from './collection'
import { keys } from './keys'

export class NamespaceRepository {
  constructor(private readonly backend: Backend) {}

  get(ns: string): Promise<NamespaceRecord | null> {
    return this.backend.get<NamespaceRecord>(keys.namespace(ns))
  }

  users(ns: string): CollectionDocument<UserRecord> {
    return new CollectionDocument<UserRecord>(this.backend, keys.users(ns))
  }

  /** Creates the namespace with its owner; false when it already exists. */
  create(record: NamespaceRecord): Promise<boolean> {
    return this.backend.transact([keys.namespace(record.id), keys.users(record.id)], (values) => {
      if (values.get(keys.namespace(record.id))) return { writes: {}, result: false }
      const users = collectionItems<UserRecord>(values.get(keys.users(record.id)))
      users.set(record.owner, { id: record.owner, createdAt: record.createdAt })
      return {
        writes: { set: { [keys.namespace(record.id)]: record, [keys.users(record.id)]: { items: recordOf(users) } } },
        result: true,
      }
    })
  }

  /** Every namespace id. Scans the keys: for periodic jobs, never per request. */
  async ids(): Promise<string[]> {
    return (await this.backend.keys(keys.namespacePrefix)).flatMap((key) => keys.namespaceOfMetaKey(key) ?? [])
  }

  async isEmpty(): Promise<boolean> {
    return (await this.backend.keys('ns')).length === 0
  }
}
