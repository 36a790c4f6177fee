import { createStorage, type Storage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import type { Cluster, Redis } from 'ioredis'
import {
  eventLogOf,
  TransactionConflictError,
  type Backend,
  type LogEntry,
  type LogRangeOptions,
  type TxOptions,
  type TxOutcome,
} from './backend'
import { COMPARE_AND_SET, compareAndSetCall, LEASE_ACQUIRE, LEASE_RELEASE, LOG_APPEND_AT } from './redis-scripts'
import { keys as storageKeys } from './repositories/keys'
import { evalScript } from './redis-eval'
import { assertOneSlot, checkRedisPrefix, type ClusterAccess, type ClusterNodeAddress } from './redis-target'

/** A single Redis or a Redis Cluster: both take the same commands for one-slot work. */
export type RedisClient = Redis | Cluster

const MAX_TX_ATTEMPTS = 200

/**
 * The scale-out backend: every key in Redis under one prefix, shared by any number of
 * processes. Plain values go through unstorage; atomic work runs as Lua on the raw client.
 * On a Redis Cluster (`target` = its nodes) every multi-key operation stays within one hash tag
 * (keys.ts gives each namespace's keys `{ns}`), reads of many keys are pipelined per node and
 * key listings scan every master.
 */
export class RedisBackend implements Backend {
  readonly kind = 'redis' as const
  readonly storage: Storage
  readonly cluster: boolean
  private readonly client: RedisClient
  private subscriber: RedisClient | null = null
  private subscribed: Promise<void> = Promise.resolve()
  private readonly listeners = new Set<(ns: string) => void>()

  /** `target`: a redis:// URL, or the nodes of a Redis Cluster and how to reach them. */
  constructor(
    target: string | { nodes: ClusterNodeAddress[]; access: ClusterAccess },
    readonly prefix = 'pf',
  ) {
    this.cluster = typeof target !== 'string'
    const driver =
      typeof target === 'string'
        ? // scanCount: a key listing (periodic jobs) takes one round trip per 1,000 keys, not per 10.
          redisDriver({
            url: target,
            base: prefix,
            enableAutoPipelining: true,
            maxRetriesPerRequest: 3,
            scanCount: 1000,
          })
        : redisDriver({
            cluster: target.nodes,
            clusterOptions: {
              enableAutoPipelining: true,
              redisOptions: { maxRetriesPerRequest: 3, ...target.access },
            },
            base: checkRedisPrefix(prefix),
          })
    this.storage = createStorage({ driver })
    this.client = driver.getInstance!() as RedisClient
  }

  private raw(key: string): string {
    return `${this.prefix}:${key}`
  }

  get<T>(key: string): Promise<T | null> {
    return this.storage.getItem<T>(key) as Promise<T | null>
  }

  async getMany<T>(keys: string[]): Promise<(T | null)[]> {
    const values = await this.readRaw(keys.map((key) => this.raw(key)))
    return values.map((value) => (value == null ? null : (JSON.parse(value) as T)))
  }

  /**
   * Raw values of any keys. A cluster refuses MGET across slots, so there each key is its own
   * GET; auto-pipelining sends them to their nodes in one batch each.
   */
  private async readRaw(rawKeys: string[]): Promise<(string | null)[]> {
    if (rawKeys.length === 0) return []
    if (this.cluster) return Promise.all(rawKeys.map((key) => this.client.get(key)))
    return this.client.mget(...rawKeys)
  }

  set(key: string, value: unknown): Promise<void> {
    return this.storage.setItem(key, value as never)
  }

  delete(key: string): Promise<void> {
    return this.storage.removeItem(key)
  }

  async keys(prefix: string): Promise<string[]> {
    if (!this.cluster) return this.storage.getKeys(prefix)
    // unstorage's driver scans one node only; a cluster's keys are spread over all masters.
    const base = prefix.replace(/:+$/, '')
    const pattern = `${escapeGlob(this.raw(base))}${base ? ':' : ''}*`
    const found: string[] = []
    for (const node of (this.client as Cluster).nodes('master')) {
      let cursor = '0'
      do {
        const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
        cursor = next
        found.push(...batch)
      } while (cursor !== '0')
    }
    return [...new Set(found)].map((key) => key.slice(this.prefix.length + 1))
  }

  has(key: string): Promise<boolean> {
    return this.storage.hasItem(key)
  }

  /** DUMP and RESTORE (any type, expiry kept): works across cluster slots, unlike RENAME. */
  async moveKey(from: string, to: string): Promise<boolean> {
    const [source, target] = [this.raw(from), this.raw(to)]
    const dump = await this.client.dumpBuffer(source)
    if (dump === null) return false
    const ttl = await this.client.pttl(source)
    try {
      await this.client.restore(target, ttl > 0 ? ttl : 0, dump)
    } catch (error) {
      // BUSYKEY: an earlier, interrupted run restored it already.
      if (!String(error).includes('BUSYKEY')) throw error
    }
    await this.client.del(source)
    return true
  }

  async getBytes(key: string): Promise<Buffer | null> {
    const raw = await this.storage.getItemRaw(key)
    if (raw == null) return null
    return Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array)
  }

  setBytes(key: string, bytes: Uint8Array): Promise<void> {
    return this.storage.setItemRaw(key, bytes)
  }

  async transact<R>(
    keys: string[],
    body: (values: Map<string, unknown>) => TxOutcome<R> | Promise<TxOutcome<R>>,
    options: TxOptions = {},
  ): Promise<R> {
    const rawKeys = keys.map((key) => this.raw(key))
    // Assumed values save the read (one round trip instead of two); the script checks them like read ones.
    let assumed = options.assume && keys.every((key) => options.assume!.has(key)) ? options.assume : null
    for (let attempt = 0; attempt < MAX_TX_ATTEMPTS; attempt++) {
      let current: (string | null)[]
      let values: Map<string, unknown>
      if (assumed) {
        values = new Map(keys.map((key) => [key, assumed!.get(key) ?? null]))
        current = keys.map((key) => (values.get(key) == null ? null : JSON.stringify(values.get(key))))
      } else {
        current = await this.readRaw(rawKeys)
        values = new Map(keys.map((key, index) => [key, current[index] == null ? null : JSON.parse(current[index]!)]))
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
      const cas = compareAndSetCall(
        rawKeys.map((key, index): [string, string | null] => [key, current[index]]),
        eventLog ? { ...writes, logs: { ...writes.logs, [eventLog.log]: writes.events! } } : writes,
        (key) => this.raw(key),
        eventLog ? { channel: this.raw(storageKeys.eventsChannel), message: eventLog.ns } : null,
      )
      if (this.cluster) assertOneSlot(cas.keys)
      const reply = (await evalScript(
        this.client,
        COMPARE_AND_SET,
        cas.keys.length,
        ...cas.keys,
        cas.spec,
      )) as unknown[]
      if (reply[0] === 1) return result
      if (assumed) {
        // The caller's values were out of date: read the stored ones, at once.
        assumed = null
        continue
      }
      // Lost a race with another writer: back off a little, re-read and run the body again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 + attempt * 2)))
    }
    throw new TransactionConflictError(keys)
  }

  async logAppend(log: string, entries: unknown[]): Promise<string[]> {
    if (entries.length === 0) return []
    const pipeline = this.client.multi()
    for (const entry of entries) pipeline.xadd(this.raw(`log:${log}`), '*', 'd', JSON.stringify(entry))
    const replies = (await pipeline.exec()) ?? []
    return replies.slice(0, entries.length).map(([, id]) => String(id))
  }

  async logAppendAt(log: string, entries: { time: number; value: unknown }[]): Promise<string[]> {
    if (entries.length === 0) return []
    const args = entries.flatMap(({ time, value }) => [String(Math.floor(time)), JSON.stringify(value)])
    return (await evalScript(this.client, LOG_APPEND_AT, 1, this.raw(`log:${log}`), ...args)) as string[]
  }

  async logRange<T>(log: string, options: LogRangeOptions): Promise<LogEntry<T>[]> {
    const key = this.raw(`log:${log}`)
    const newestFirst = options.newestFirst ?? options.before != null
    const raw = newestFirst
      ? await this.client.xrevrange(key, options.before ? `(${options.before}` : '+', '-', 'COUNT', options.limit)
      : await this.client.xrange(key, options.after ? `(${options.after}` : '-', '+', 'COUNT', options.limit)
    return raw.map(([id, fields]) => ({
      cursor: id,
      time: Number(id.split('-')[0]),
      value: JSON.parse(fields[1]) as T,
    }))
  }

  async logTrimBefore(log: string, beforeMs: number): Promise<number> {
    return Number(await this.client.xtrim(this.raw(`log:${log}`), 'MINID', `${Math.floor(beforeMs)}-0`))
  }

  logLength(log: string): Promise<number> {
    return this.client.xlen(this.raw(`log:${log}`))
  }

  async queueItems<T>(queue: string): Promise<T[]> {
    return (await this.client.lrange(this.raw(`queue:${queue}`), 0, -1)).map((item) => JSON.parse(item) as T)
  }

  async leaseAcquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await evalScript(this.client, LEASE_ACQUIRE, 1, this.raw(`lease:${name}`), owner, String(ttlMs))) === 1
  }

  async leaseRelease(name: string, owner: string): Promise<void> {
    await evalScript(this.client, LEASE_RELEASE, 1, this.raw(`lease:${name}`), owner)
  }

  leaseOwner(name: string): Promise<string | null> {
    return this.client.get(this.raw(`lease:${name}`))
  }

  increment(key: string, by = 1): Promise<number> {
    return this.client.incrby(this.raw(key), by)
  }

  onEvents(listener: (ns: string) => void): () => void {
    this.listeners.add(listener)
    if (!this.subscriber) {
      // A dedicated connection: a subscribed ioredis client cannot run other commands.
      this.subscriber = this.duplicateConnection()
      this.subscribed = this.subscriber.subscribe(this.raw(storageKeys.eventsChannel)).then(() => undefined)
      this.subscriber.on('message', (_channel: string, ns: string) => this.listeners.forEach((notify) => notify(ns)))
    }
    return () => this.listeners.delete(listener)
  }

  eventsReady(): Promise<void> {
    return this.subscribed
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.client.ping()) === 'PONG'
    } catch {
      return false
    }
  }

  /** The raw client, for the few adapters that need Redis structures directly. */
  get redis(): RedisClient {
    return this.client
  }

  /** A new connection to the same Redis or cluster (a subscribed connection runs nothing else). */
  duplicateConnection(): RedisClient {
    return this.client.duplicate()
  }

  async close(): Promise<void> {
    this.listeners.clear()
    this.subscriber?.disconnect()
    await this.storage.dispose()
  }
}

/** Escapes Redis glob characters so a prefix matches only itself. */
function escapeGlob(value: string): string {
  return value.replace(/[*?[\]\\]/g, (char) => `\\${char}`)
}
