import type { LegacyQueueReader } from '../ports'
import type { RedisConnection } from './connection'

/** Queues of the old layout on Redis: one list per queue (`queue:<name>`). */
export class RedisLegacyQueues implements LegacyQueueReader {
  constructor(private readonly connection: RedisConnection) {}

  async items<T>(queue: string): Promise<T[]> {
    const items = await this.connection.client.lrange(this.connection.raw(`queue:${queue}`), 0, -1)
    return items.map((item) => JSON.parse(item) as T)
  }
}
