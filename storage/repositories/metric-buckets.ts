import { LRUCache } from 'lru-cache'
import { BUCKETS, ZERO_COUNTERS, type BucketSize, type MetricCounters } from '../model/delivery'
import { webhookKeys as keys } from './webhook-keys'

/** The bucket starts stored for one webhook and size: what the retention pass prunes by. */
export interface MetricIndex {
  /** Bucket starts (ms), oldest first. */
  starts: number[]
}

/** One metric bucket a write adds to, with its size's index key. */
export interface Bucket {
  key: string
  index: string
  start: number
}

/** Index keys a writer remembers: 3 per webhook, so 10,000 webhooks actively delivering from one process. */
export const METRIC_INDEXES_REMEMBERED = 30_000

/** The counters in their stored order (ZERO_COUNTERS'), so a bucket's JSON keeps its shape. */
const COUNTER_NAMES = Object.keys(ZERO_COUNTERS) as (keyof MetricCounters)[]

/** A bucket's first write found its index key unread: the write is done again with the indexes. */
class IndexNeeded extends Error {}

/** Start of the bucket of `size` containing `at` (UTC). */
export function bucketStart(at: number, size: BucketSize): number {
  return Math.floor(at / BUCKETS[size]) * BUCKETS[size]
}

/**
 * How a transaction adds to a webhook's 1m, 1h and 1d counters. It remembers, per bucket index,
 * the bucket start last seen stored: a write to that bucket leaves the index alone, unread. A
 * webhook delivering all day has 1,440 starts in its minute index and 720 in its hour index
 * (about 30 KB), which every attempt otherwise read and compared.
 *
 * What it remembers is bounded (#30): three index keys per webhook, at most `maxIndexes` of them,
 * least recently written dropped first. Webhooks deleted by another process are never `forget`-ten
 * here; forgetting one only costs its next write a read of the index.
 */
export class MetricBucketWriter {
  private readonly indexed: LRUCache<string, number>

  constructor(readonly maxIndexes = METRIC_INDEXES_REMEMBERED) {
    this.indexed = new LRUCache({ max: maxIndexes })
  }

  /** How many index keys it remembers now (at most `maxIndexes`). */
  remembered(): number {
    return this.indexed.size
  }

  /** The 1m, 1h and 1d buckets holding `at`, with their index keys. */
  buckets(ns: string, webhook: string, at: number): Bucket[] {
    return (Object.keys(BUCKETS) as BucketSize[]).map((size) => ({
      key: keys.metrics(ns, webhook, size, bucketStart(at, size)),
      index: keys.metricsIndex(ns, webhook, size),
      start: bucketStart(at, size),
    }))
  }

  /**
   * Runs `write` over the metric keys it must read: every bucket, and the index of each bucket
   * not known to be stored. A bucket found absent after all (pruned, or written by another
   * process) has the write done again with every index.
   */
  async run<T>(buckets: Bucket[], write: (metricKeys: string[]) => Promise<T>): Promise<T> {
    const known = (bucket: Bucket) => this.indexed.get(bucket.index) === bucket.start
    let result: T
    try {
      result = await write(buckets.flatMap((bucket) => (known(bucket) ? [bucket.key] : [bucket.key, bucket.index])))
    } catch (error) {
      if (!(error instanceof IndexNeeded)) throw error
      result = await write(buckets.flatMap((bucket) => [bucket.key, bucket.index]))
    }
    for (const bucket of buckets) this.indexed.set(bucket.index, bucket.start)
    return result
  }

  /**
   * The writes adding `delta` to each bucket (and entering a bucket's first write in its index).
   * Throws IndexNeeded (caught by `run`) when a bucket is new and its index was not read.
   */
  counted(buckets: Bucket[], values: Map<string, unknown>, delta: Partial<MetricCounters>): Record<string, unknown> {
    const set: Record<string, unknown> = {}
    for (const { key, index, start } of buckets) {
      const stored = values.get(key) as MetricCounters | null
      if (!stored && !values.has(index)) throw new IndexNeeded()
      const current = stored ?? ZERO_COUNTERS
      // A plain loop: it runs for three buckets on every attempt.
      const counters = {} as MetricCounters
      for (const name of COUNTER_NAMES) counters[name] = current[name] + (delta[name] ?? 0)
      set[key] = counters
      const starts = (values.get(index) as MetricIndex | null)?.starts ?? []
      if (!stored && !starts.includes(start)) set[index] = { starts: [...starts, start].sort((a, b) => a - b) }
    }
    return set
  }

  /** Forgets what it knew of a webhook's indexes (its metrics were removed). */
  forget(ns: string, webhook: string): void {
    for (const size of Object.keys(BUCKETS) as BucketSize[]) this.indexed.delete(keys.metricsIndex(ns, webhook, size))
  }
}
