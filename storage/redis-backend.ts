import type { Storage } from 'unstorage'
import type { Backend } from './ports'
import { RedisConnection, type RedisClient, type RedisTarget } from './redis/connection'
import { RedisCounters } from './redis/counters'
import { RedisKeyValue } from './redis/key-value'
import { RedisLeases } from './redis/leases'
import { RedisLegacyQueues } from './redis/legacy-queues'
import { RedisLogs } from './redis/logs'
import { RedisSignals } from './redis/signals'

export type { RedisClient } from './redis/connection'

/**
 * The scale-out backend: the Redis implementation of every port over one connection, every key
 * under one prefix, shared by any number of processes. On a Redis Cluster (`target` = its nodes)
 * every multi-key operation stays within one hash tag.
 */
export class RedisBackend implements Backend {
  readonly kind = 'redis' as const
  private readonly connection: RedisConnection
  readonly keyValue: RedisKeyValue
  readonly logs: RedisLogs
  readonly leases: RedisLeases
  readonly counters: RedisCounters
  readonly signals: RedisSignals
  readonly legacyQueues: RedisLegacyQueues

  /** `target`: a redis:// URL, or the nodes of a Redis Cluster and how to reach them. */
  constructor(target: RedisTarget, prefix = 'pf') {
    this.connection = new RedisConnection(target, prefix)
    this.signals = new RedisSignals(this.connection)
    this.keyValue = new RedisKeyValue(this.connection, (change) => this.signals.changed(change))
    this.logs = new RedisLogs(this.connection)
    this.leases = new RedisLeases(this.connection)
    this.counters = new RedisCounters(this.connection)
    this.legacyQueues = new RedisLegacyQueues(this.connection)
  }

  get prefix(): string {
    return this.connection.prefix
  }

  get cluster(): boolean {
    return this.connection.cluster
  }

  get storage(): Storage {
    return this.connection.storage
  }

  /** The raw client, for migrations, benchmarks and tests that look at Redis structures directly. */
  get redis(): RedisClient {
    return this.connection.client
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.connection.client.ping()) === 'PONG'
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    await this.signals.close()
    await this.connection.close()
  }
}
