import type { Backend, TxWrites } from '../backend'

/**
 * A small collection kept as one document (teams, license sets, users of a namespace):
 * reads are one GET, and every change is one atomic read-modify-write.
 */
export class CollectionDocument<T extends { id: string }> {
  constructor(
    private readonly backend: Backend,
    private readonly key: string,
  ) {}

  async all(): Promise<T[]> {
    const doc = await this.backend.get<{ items: Record<string, T> }>(this.key)
    return Object.values(doc?.items ?? {})
  }

  async find(id: string): Promise<T | null> {
    const doc = await this.backend.get<{ items: Record<string, T> }>(this.key)
    return doc?.items[id] ?? null
  }

  /**
   * Runs `change` on the current items; it returns the new items map (or throws to abort)
   * plus anything else to write atomically (events, logs).
   */
  update<R>(
    change: (items: Record<string, T>) => { items: Record<string, T>; result: R; also?: TxWrites },
  ): Promise<R> {
    return this.backend.transact([this.key], (values) => {
      const current = (values.get(this.key) as { items: Record<string, T> } | null)?.items ?? {}
      const { items, result, also } = change({ ...current })
      return { writes: { ...also, set: { ...also?.set, [this.key]: { items } } }, result }
    })
  }
}
