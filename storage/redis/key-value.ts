import type { Cluster } from 'ioredis'
import { joinKeys } from 'unstorage'
import { eventLogOf, notifiedNamespace, TransactionConflictError, type TxOptions, type TxOutcome } from '../backend'
import { changeMessage } from './signals'
import type { ChangeAnnouncement, KeyValueStore } from '../ports'
import { COMPARE_AND_SET, compareAndSetCall } from '../redis-scripts'
import { keys as storageKeys } from '../repositories/keys'
import { evalScript } from '../redis-eval'
import { assertOneSlot } from '../redis-target'
import { parseStoredJson, readStoredText } from '../stored-json'
import { keepStoredText, storedTextOf, type StoredText } from '../stored-text'
import { TimeSlice } from '../time-slice'
import type { RedisConnection } from './connection'

const MAX_TX_ATTEMPTS = 200

/** How unstorage wrote bytes before they were stored as they are (no stored snapshot, cache entry or tarball starts so). */
const LEGACY_RAW = Buffer.from('base64:')

/**
 * Key-value port on Redis: plain values through unstorage, transactions as one Lua
 * compare-and-set (which also appends their log entries and events, and publishes the events
 * wake-up). On a cluster every transaction stays within one hash tag (keys.ts gives each
 * namespace's keys `{ns}`), reads of many keys are pipelined per node and listings scan every master.
 */
export class RedisKeyValue implements KeyValueStore {
  /**
   * `announced`: told when a transaction that announces a change (`TxWrites.announce`) commits,
   * before its caller goes on: this process's listeners end what they keep at once, and the
   * published message tells the other processes.
   */
  constructor(
    private readonly connection: RedisConnection,
    private readonly announced: (change: ChangeAnnouncement) => void = () => undefined,
  ) {}

  /** What unstorage's `getItem` answers (destr's rules), a large document parsed in turns (stored-json.ts). */
  async get<T>(key: string): Promise<T | null> {
    // The Redis key unstorage's driver reads for `key` (the storage's key rules, under the prefix).
    const [text] = await this.connection.readRaw([joinKeys(this.connection.prefix, key)])
    return text == null ? null : ((await readStoredText(text)) as T)
  }

  /**
   * Ordered either way (`options.ordered`): one MGET, or on a cluster one namespace's GETs in order
   * on its node's connection. Values are parsed as JSON, as a transaction reads them.
   */
  async getMany<T>(keys: string[]): Promise<(T | null)[]> {
    return (await parseAll(await this.connection.readRaw(keys.map((key) => this.connection.raw(key))))) as (T | null)[]
  }

  set(key: string, value: unknown): Promise<void> {
    return this.connection.storage.setItem(key, value as never)
  }

  delete(key: string): Promise<void> {
    return this.connection.storage.removeItem(key)
  }

  async keys(prefix: string): Promise<string[]> {
    const { cluster, client, storage } = this.connection
    if (!cluster) return storage.getKeys(prefix)
    // unstorage's driver scans one node only; a cluster's keys are spread over all masters.
    const base = prefix.replace(/:+$/, '')
    const pattern = `${escapeGlob(this.connection.raw(base))}${base ? ':' : ''}*`
    const found: string[] = []
    for (const node of (client as Cluster).nodes('master')) {
      let cursor = '0'
      do {
        const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
        cursor = next
        found.push(...batch)
      } while (cursor !== '0')
    }
    return [...new Set(found)].map((key) => key.slice(this.connection.prefix.length + 1))
  }

  has(key: string): Promise<boolean> {
    return this.connection.storage.hasItem(key)
  }

  /** DUMP and RESTORE (any type, expiry kept): works across cluster slots, unlike RENAME. */
  async moveKey(from: string, to: string): Promise<boolean> {
    const { client } = this.connection
    const [source, target] = [this.connection.raw(from), this.connection.raw(to)]
    const dump = await client.dumpBuffer(source)
    if (dump === null) return false
    const ttl = await client.pttl(source)
    try {
      await client.restore(target, ttl > 0 ? ttl : 0, dump)
    } catch (error) {
      // BUSYKEY: an earlier, interrupted run restored it already.
      if (!String(error).includes('BUSYKEY')) throw error
    }
    await client.del(source)
    return true
  }

  /**
   * Bytes as they are stored, read as a Buffer (unstorage's redis driver has no raw form: it wrote
   * `base64:` text, encoded and decoded in one go on the event loop, 50 ms and more for an advisory
   * snapshot at ADVISORY_MAX_ENTRIES or a large tarball). A value written that way is still read.
   */
  async getBytes(key: string): Promise<Buffer | null> {
    const raw = await this.connection.client.getBuffer(this.connection.raw(key))
    if (raw == null) return null
    if (raw.length >= LEGACY_RAW.length && raw.subarray(0, LEGACY_RAW.length).equals(LEGACY_RAW))
      return Buffer.from(raw.subarray(LEGACY_RAW.length).toString('latin1'), 'base64')
    return raw
  }

  async setBytes(key: string, bytes: Uint8Array): Promise<void> {
    await this.connection.client.set(
      this.connection.raw(key),
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    )
  }

  async transact<R>(
    keys: string[],
    body: (values: Map<string, unknown>) => TxOutcome<R> | Promise<TxOutcome<R>>,
    options: TxOptions = {},
  ): Promise<R> {
    const raw = (key: string) => this.connection.raw(key)
    const rawKeys = keys.map(raw)
    // Assumed values save the read (one round trip instead of two); the script checks them like read ones.
    let assumed = options.assume && keys.every((key) => options.assume!.has(key)) ? options.assume : null
    /** What the compare-and-set that refused the assumed values found stored (one atomic read, saved). */
    let storedAtRefusal: (string | null)[] | null = null
    for (let attempt = 0; attempt < MAX_TX_ATTEMPTS; attempt++) {
      let current: (StoredText | null)[]
      let values: Map<string, unknown>
      if (assumed) {
        values = new Map(keys.map((key) => [key, assumed!.get(key) ?? null]))
        // The text each value was read or written as, kept: not serialised (and hashed) again.
        current = keys.map((key) => (values.get(key) == null ? null : storedTextOf(values.get(key))))
      } else {
        const texts = storedAtRefusal ?? (await this.connection.readRaw(rawKeys))
        storedAtRefusal = null
        const parsed = await parseAll(texts)
        values = new Map(keys.map((key, index) => [key, parsed[index]]))
        current = texts.map((text, index) => (text === null ? null : keepStoredText(parsed[index], text)))
      }
      let outcome: TxOutcome<R>
      try {
        outcome = await body(values)
      } catch (error) {
        if (!assumed) throw error
        // The body refused the assumed values (they may be out of date): it decides on the stored ones.
        assumed = null
        continue
      }
      const { writes, result } = outcome
      const eventLog = eventLogOf(keys, writes)
      const notified = notifiedNamespace(eventLog, writes)
      // One script sets every value at once: the stamps go with the rest.
      const stamped = writes.stamps ? { ...writes, set: { ...writes.set, ...writes.stamps } } : writes
      const cas = await compareAndSetCall(
        rawKeys.map((key, index): [string, StoredText | null] => [key, current[index]]),
        eventLog ? { ...stamped, logs: { ...stamped.logs, [eventLog.log]: writes.events! } } : stamped,
        raw,
        [
          ...(notified !== null ? [{ channel: raw(storageKeys.eventsChannel), message: notified }] : []),
          ...(writes.announce !== undefined
            ? [{ channel: raw(storageKeys.changesChannel), message: changeMessage(writes.announce) }]
            : []),
        ],
        { storedOnRefusal: assumed !== null },
      )
      if (this.connection.cluster) assertOneSlot(cas.keys)
      const reply = (await evalScript(
        this.connection.client,
        COMPARE_AND_SET,
        cas.keys.length,
        ...cas.keys,
        ...cas.argv,
      )) as unknown[]
      if (reply[0] === 1) {
        if (writes.announce !== undefined) this.announced(writes.announce)
        return result
      }
      if (assumed) {
        // The caller's values were out of date: decide on the stored ones the refusal answered, at once.
        assumed = null
        if (reply.length === rawKeys.length + 1) storedAtRefusal = reply.slice(1) as (string | null)[]
        continue
      }
      // Lost a race with another writer: back off a little, re-read and run the body again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 + attempt * 2)))
    }
    throw new TransactionConflictError(keys)
  }
}

/** Raw JSON values read together, parsed one after another in one budget of turns (null stays null). */
async function parseAll(texts: (string | null)[]): Promise<unknown[]> {
  const slice = new TimeSlice()
  const values: unknown[] = []
  for (const text of texts) values.push(text == null ? null : await parseStoredJson(text, slice))
  return values
}

/** Escapes Redis glob characters so a prefix matches only itself. */
function escapeGlob(value: string): string {
  return value.replace(/[*?[\]\\]/g, (char) => `\\${char}`)
}
