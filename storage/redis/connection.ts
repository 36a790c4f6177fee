import { createStorage, type Storage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import type { Cluster, Redis } from 'ioredis'
import { checkRedisPrefix, type ClusterAccess, type ClusterNodeAddress } from '../redis-target'

/** A single Redis or a Redis Cluster: both take the same commands for one-slot work. */
export type RedisClient = Redis | Cluster

/** A redis:// URL, or the nodes of a Redis Cluster and how to reach them. */
export type RedisTarget = string | { nodes: ClusterNodeAddress[]; access: ClusterAccess }

/**
 * One connection to Redis (or a cluster) shared by the Redis ports: unstorage for plain values,
 * the raw ioredis client for Lua and streams, and every key under one prefix.
 */
export class RedisConnection {
  readonly storage: Storage
  readonly cluster: boolean
  readonly client: RedisClient

  constructor(
    target: RedisTarget,
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

  /** The Redis key of a storage key. */
  raw(key: string): string {
    return `${this.prefix}:${key}`
  }

  /**
   * Raw values of any keys. A cluster refuses MGET across slots, so there each key is its own
   * GET; auto-pipelining sends them to their nodes in one batch each.
   */
  async readRaw(rawKeys: string[]): Promise<(string | null)[]> {
    if (rawKeys.length === 0) return []
    if (this.cluster) return Promise.all(rawKeys.map((key) => this.client.get(key)))
    return this.client.mget(...rawKeys)
  }

  /** A new connection to the same Redis or cluster (a subscribed connection runs nothing else). */
  duplicate(): RedisClient {
    return this.client.duplicate()
  }

  close(): Promise<void> {
    return this.storage.dispose()
  }
}
