import { createStorage, type Storage } from 'unstorage'
import { reasonOf, StorageFailure } from '../storage-failure'
import { stringifyCooperatively } from '../cooperative-json'
import { readStoredText } from '../stored-json'
import { TimeSlice } from '../time-slice'

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

  /**
   * What unstorage's `getItem` answers, the stored text parsed in turns (storage/stored-json.ts): the
   * driver's text is read raw, so a 1 MiB document is not parsed in one go by unstorage first.
   */
  async get<T>(key: string): Promise<T | null> {
    return (await this.valueOf(await this.getRaw(key), new TimeSlice())) as T | null
  }

  /** Reads go through the driver's limit (atomic-fs-driver.ts); one failed read fails them all. */
  async getMany<T>(keys: string[]): Promise<(T | null)[]> {
    if (keys.length === 0) return []
    const raws = await Promise.all(keys.map((key) => this.getRaw(key)))
    // Parsed one after another in one budget: values read together are not parsed in the same turns.
    const slice = new TimeSlice()
    const values: (T | null)[] = []
    for (const raw of raws) values.push((await this.valueOf(raw, slice)) as T | null)
    return values
  }

  /** A driver's raw answer as `getItem` would have it: text (the fs driver answers bytes) through destr's rules. */
  private async valueOf(raw: unknown, slice: TimeSlice): Promise<unknown> {
    if (raw == null) return null
    if (typeof raw === 'string') return readStoredText(raw, slice)
    return Buffer.isBuffer(raw) ? readStoredText(raw.toString('utf8'), slice) : raw
  }

  /**
   * An object is written as the JSON unstorage would write, serialised in turns: a firewall and its
   * history entry and event are up to 1 MiB of outside input each (CONTRACT.md 8). Other values
   * (strings, numbers) are written as unstorage writes them.
   */
  async set(key: string, value: unknown): Promise<void> {
    return this.write(key, await this.prepare(value))
  }

  /**
   * The value as `write` takes it: an object serialised in turns, anything else as it is. Values
   * prepared together share `slice` and `keyLists` (a firewall and its history entry hold the same
   * permissions record, whose 47,500 keys are listed once).
   */
  async prepare(value: unknown, slice = new TimeSlice(), keyLists?: WeakMap<object, string[]>): Promise<unknown> {
    if (value === null || typeof value !== 'object') return value
    return (await stringifyCooperatively(value, slice, keyLists)).pieces.join('')
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
