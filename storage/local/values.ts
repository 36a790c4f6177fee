import { createStorage, type Storage } from 'unstorage'
import { reasonOf, StorageFailure } from '../storage-failure'
import { stringifyCooperatively } from '../cooperative-json'

/**
 * A driver's answer as a stored value. Stored values are JSON, so an Error object is a driver
 * reporting a failure the way unstorage's fs helpers do (`readFile(...).catch(e => e)`): thrown.
 */
function storedValue(value: unknown): unknown {
  if (value instanceof Error) throw new StorageFailure('read', reasonOf(value), { cause: value })
  return value
}

/** A driver call that failed is a StorageFailure (503 at the edge), whichever driver it was. */
async function failing<T>(operation: string, call: Promise<T>): Promise<T> {
  try {
    return await call
  } catch (error) {
    throw error instanceof StorageFailure ? error : new StorageFailure(operation, reasonOf(error), { cause: error })
  }
}

/**
 * Plain reads and writes on an unstorage driver (fs by default, memory in unit tests), failures
 * reported as StorageFailure: what the local ports (key-value, logs, queues) are built on.
 */
export class LocalValues {
  constructor(readonly storage: Storage = createStorage()) {}

  async get<T>(key: string): Promise<T | null> {
    return storedValue(await failing('read', this.storage.getItem<T>(key))) as T | null
  }

  /** Reads go through the driver's limit (atomic-fs-driver.ts); one failed read fails them all. */
  async getMany<T>(keys: string[]): Promise<(T | null)[]> {
    if (keys.length === 0) return []
    const items = await failing('read', this.storage.getItems(keys))
    const byKey = new Map(items.map((item) => [item.key, storedValue(item.value)]))
    return keys.map((key) => (byKey.get(key) ?? null) as T | null)
  }

  /**
   * An object is written as the JSON unstorage would write, serialised in turns: a firewall and its
   * history entry and event are up to 1 MiB of outside input each (CONTRACT.md 8). Other values
   * (strings, numbers) are written as unstorage writes them.
   */
  async set(key: string, value: unknown): Promise<void> {
    return this.write(key, await this.prepare(value))
  }

  /** The value as `write` takes it: an object serialised in turns, anything else as it is. */
  async prepare(value: unknown): Promise<unknown> {
    return value !== null && typeof value === 'object' ? (await stringifyCooperatively(value)).pieces.join('') : value
  }

  /** Writes what `prepare` made of a value. */
  write(key: string, prepared: unknown): Promise<void> {
    return failing('write', this.storage.setItem(key, prepared as never))
  }

  delete(key: string): Promise<void> {
    return failing('remove', this.storage.removeItem(key))
  }

  keys(prefix: string): Promise<string[]> {
    return failing('list', this.storage.getKeys(prefix))
  }

  has(key: string): Promise<boolean> {
    return this.storage.hasItem(key)
  }

  async getRaw(key: string): Promise<unknown> {
    return storedValue(await failing('read', this.storage.getItemRaw(key)))
  }

  async getBytes(key: string): Promise<Buffer | null> {
    const raw = await this.getRaw(key)
    if (raw == null) return null
    return Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array)
  }

  setBytes(key: string, bytes: Uint8Array): Promise<void> {
    return failing('write', this.storage.setItemRaw(key, bytes))
  }
}
