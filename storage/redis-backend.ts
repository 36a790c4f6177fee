import { createStorage, type Storage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import type Redis from 'ioredis'
import { eventLogOf, TransactionConflictError, type Backend, type LogEntry, type LogRangeOptions, type TxOutcome } from './backend'
import { COMPARE_AND_SET, LEASE_ACQUIRE, LEASE_RELEASE, QUEUE_MOVE_FRONT, QUEUE_PUSH } from './redis-scripts'
import { keys as storageKeys } from './repositories/keys'

const MAX_TX_ATTEMPTS = 200

/**
 * The scale-out backend: every key in Redis under one prefix, shared by any number of
 * processes. Plain values go through unstorage; atomic work runs as Lua on the raw client.
 */
export class RedisBackend implements Backend {
  readonly kind = 'redis' as const
  readonly storage: Storage
  private readonly client: Redis
  private subscriber: Redis | null = null
  private subscribed: Promise<void> = Promise.resolve()
  private readonly listeners = new Set<(ns: string) => void>()

  constructor(url: string, readonly prefix = 'pf') {
    const driver = redisDriver({ url, base: prefix, enableAutoPipelining: true, maxRetriesPerRequest: 3 })
    this.storage = createStorage({ driver })
    this.client = driver.getInstance!() as Redis
  }

  private raw(key: string): string {
    return `${this.prefix}:${key}`
  }

  get<T>(key: string): Promise<T | null> {
    return this.storage.getItem<T>(key) as Promise<T | null>
  }

  async getMany<T>(keys: string[]): Promise<(T | null)[]> {
    if (keys.length === 0) return []
    const values = await this.client.mget(...keys.map((key) => this.raw(key)))
    return values.map((value) => (value == null ? null : (JSON.parse(value) as T)))
  }

  set(key: string, value: unknown): Promise<void> {
    return this.storage.setItem(key, value as never)
  }

  delete(key: string): Promise<void> {
    return this.storage.removeItem(key)
  }

  keys(prefix: string): Promise<string[]> {
    return this.storage.getKeys(prefix)
  }

  has(key: string): Promise<boolean> {
    return this.storage.hasItem(key)
  }

  async getBytes(key: string): Promise<Buffer | null> {
    const raw = await this.storage.getItemRaw(key)
    if (raw == null) return null
    return Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array)
  }

  setBytes(key: string, bytes: Uint8Array): Promise<void> {
    return this.storage.setItemRaw(key, bytes)
  }

  async transact<R>(keys: string[], body: (values: Map<string, unknown>) => TxOutcome<R> | Promise<TxOutcome<R>>): Promise<R> {
    const rawKeys = keys.map((key) => this.raw(key))
    for (let attempt = 0; attempt < MAX_TX_ATTEMPTS; attempt++) {
      const current = rawKeys.length ? await this.client.mget(...rawKeys) : []
      const values = new Map(keys.map((key, index) => [key, current[index] == null ? null : JSON.parse(current[index]!)]))
      const { writes, result } = await body(values)
      const logs: [string, string[]][] = Object.entries(writes.logs ?? {}).map(([log, entries]) => [
        this.raw(`log:${log}`),
        entries.map((entry) => JSON.stringify(entry)),
      ])
      const eventLog = eventLogOf(keys, writes)
      if (eventLog) logs.push([this.raw(`log:${eventLog.log}`), writes.events!.map((e) => JSON.stringify(e))])
      const spec = {
        watch: rawKeys,
        expected: current.map((value) => value ?? null),
        set: Object.entries(writes.set ?? {}).map(([key, value]) => [this.raw(key), JSON.stringify(value)]),
        del: (writes.delete ?? []).map((key) => this.raw(key)),
        logs,
        notify: eventLog ? this.raw(storageKeys.eventsChannel) : '',
        notifyMessage: eventLog?.ns ?? '',
      }
      const reply = (await this.client.eval(COMPARE_AND_SET, 0, JSON.stringify(spec))) as unknown[]
      if (reply[0] === 1) return result
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

  async logRange<T>(log: string, options: LogRangeOptions): Promise<LogEntry<T>[]> {
    const key = this.raw(`log:${log}`)
    const newestFirst = options.newestFirst ?? options.before != null
    const raw = newestFirst
      ? await this.client.xrevrange(key, options.before ? `(${options.before}` : '+', '-', 'COUNT', options.limit)
      : await this.client.xrange(key, options.after ? `(${options.after}` : '-', '+', 'COUNT', options.limit)
    return raw.map(([id, fields]) => ({ cursor: id, value: JSON.parse(fields[1]) as T }))
  }

  async logTrimBefore(log: string, beforeMs: number): Promise<number> {
    return Number(await this.client.xtrim(this.raw(`log:${log}`), 'MINID', `${Math.floor(beforeMs)}-0`))
  }

  logLength(log: string): Promise<number> {
    return this.client.xlen(this.raw(`log:${log}`))
  }

  async queuePush(queue: string, items: unknown[], cap: number): Promise<{ length: number; dropped: number }> {
    if (items.length === 0) return { length: await this.queueLength(queue), dropped: 0 }
    const [length, dropped] = (await this.client.eval(
      QUEUE_PUSH,
      1,
      this.raw(`queue:${queue}`),
      String(cap),
      ...items.map((item) => JSON.stringify(item)),
    )) as [number, number]
    return { length, dropped }
  }

  async queuePeek<T>(queue: string, count: number): Promise<T[]> {
    if (count <= 0) return []
    const raw = await this.client.lrange(this.raw(`queue:${queue}`), 0, count - 1)
    return raw.map((item) => JSON.parse(item) as T)
  }

  async queueDrop(queue: string, count: number): Promise<void> {
    if (count > 0) await this.client.ltrim(this.raw(`queue:${queue}`), count, -1)
  }

  queueLength(queue: string): Promise<number> {
    return this.client.llen(this.raw(`queue:${queue}`))
  }

  async queueClear(queue: string): Promise<void> {
    await this.client.del(this.raw(`queue:${queue}`))
  }

  async queuePopFront<T>(queue: string, count: number): Promise<T[]> {
    if (count <= 0) return []
    const raw = (await this.client.lpop(this.raw(`queue:${queue}`), count)) ?? []
    return raw.map((item) => JSON.parse(item) as T)
  }

  async queueMoveFront(queue: string, count: number, expectFirstId: string, key: string, meta: Record<string, string>): Promise<boolean> {
    if (count <= 0) return false
    const moved = await this.client.eval(QUEUE_MOVE_FRONT, 2, this.raw(`queue:${queue}`), this.raw(key), String(count), expectFirstId, JSON.stringify(meta))
    return moved === 1
  }

  async leaseAcquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.client.eval(LEASE_ACQUIRE, 1, this.raw(`lease:${name}`), owner, String(ttlMs))) === 1
  }

  async leaseRelease(name: string, owner: string): Promise<void> {
    await this.client.eval(LEASE_RELEASE, 1, this.raw(`lease:${name}`), owner)
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
      this.subscriber = this.client.duplicate()
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
  get redis(): Redis {
    return this.client
  }

  async close(): Promise<void> {
    this.listeners.clear()
    this.subscriber?.disconnect()
    await this.storage.dispose()
  }
}
