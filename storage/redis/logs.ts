import type { LogEntry, LogRangeOptions } from '../backend'
import type { LogStore } from '../ports'
import { LOG_APPEND_AT } from '../redis-scripts'
import { evalScript } from '../redis-eval'
import type { RedisConnection } from './connection'

/** Logs on Redis: one stream per log (`log:<name>`); cursors are stream ids, times their milliseconds. */
export class RedisLogs implements LogStore {
  constructor(private readonly connection: RedisConnection) {}

  private key(log: string): string {
    return this.connection.raw(`log:${log}`)
  }

  async append(log: string, entries: unknown[]): Promise<string[]> {
    if (entries.length === 0) return []
    const pipeline = this.connection.client.multi()
    for (const entry of entries) pipeline.xadd(this.key(log), '*', 'd', JSON.stringify(entry))
    const replies = (await pipeline.exec()) ?? []
    return replies.slice(0, entries.length).map(([, id]) => String(id))
  }

  async appendAt(log: string, entries: { time: number; value: unknown }[]): Promise<string[]> {
    if (entries.length === 0) return []
    const args = entries.flatMap(({ time, value }) => [String(Math.floor(time)), JSON.stringify(value)])
    return (await evalScript(this.connection.client, LOG_APPEND_AT, 1, this.key(log), ...args)) as string[]
  }

  async range<T>(log: string, options: LogRangeOptions): Promise<LogEntry<T>[]> {
    const { client } = this.connection
    const key = this.key(log)
    const newestFirst = options.newestFirst ?? options.before != null
    const raw = newestFirst
      ? await client.xrevrange(key, options.before ? `(${options.before}` : '+', '-', 'COUNT', options.limit)
      : await client.xrange(key, options.after ? `(${options.after}` : '-', '+', 'COUNT', options.limit)
    return raw.map(([id, fields]) => ({
      cursor: id,
      time: Number(id.split('-')[0]),
      value: JSON.parse(fields[1]) as T,
    }))
  }

  async trimBefore(log: string, beforeMs: number): Promise<number> {
    return Number(await this.connection.client.xtrim(this.key(log), 'MINID', `${Math.floor(beforeMs)}-0`))
  }

  length(log: string): Promise<number> {
    return this.connection.client.xlen(this.key(log))
  }
}
