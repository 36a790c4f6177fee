import Redis from 'ioredis'
import type { DedupeStore } from './store'

export interface RedisStoreOptions {
  /** An ioredis client, or a URL to connect to (then `close()` disconnects it). */
  redis: Redis | string
  /** Prefix of every key (default `webhook-receiver:`); one per endpoint if they must not share marks. */
  prefix?: string
}

/**
 * Marks in Redis with a TTL (`SET key 1 EX ttl`): shared by every process of the receiver and
 * kept across restarts, so a receiver killed mid-batch skips, after its restart, the events it
 * had finished.
 * @example new RedisStore({ redis: process.env.REDIS_URL!, prefix: 'billing-hook:' })
 */
export class RedisStore implements DedupeStore {
  private readonly client: Redis
  private readonly owned: boolean
  private readonly prefix: string

  constructor(options: RedisStoreOptions) {
    this.owned = typeof options.redis === 'string'
    this.client = typeof options.redis === 'string' ? new Redis(options.redis) : options.redis
    this.prefix = options.prefix ?? 'webhook-receiver:'
  }

  async has(key: string): Promise<boolean> {
    return (await this.client.exists(this.prefix + key)) === 1
  }

  async mark(key: string, ttlSeconds: number): Promise<void> {
    await this.client.set(this.prefix + key, '1', 'EX', Math.max(1, Math.ceil(ttlSeconds)))
  }

  /** Disconnects the client if this store created it. */
  async close(): Promise<void> {
    if (this.owned) await this.client.quit()
  }
}
