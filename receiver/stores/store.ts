/**
 * Where a receiver remembers what it has handled: `delivery:<webhook-id>` once a whole
 * delivery succeeded, `event:<event id>` once one event's handler succeeded. Any key-value
 * store with expiry can implement it (a database table with a unique key works too).
 */
export interface DedupeStore {
  /** Whether `key` was marked and has not expired. */
  has(key: string): Promise<boolean>
  /** Marks `key` for `ttlSeconds`. */
  mark(key: string, ttlSeconds: number): Promise<void>
}
