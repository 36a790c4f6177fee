import type { DedupeStore } from './store'

export interface MemoryStoreOptions {
  /** Oldest marks are forgotten past this count (default 100,000), so memory stays bounded. */
  maxEntries?: number
  /** Clock in milliseconds (tests). */
  now?: () => number
}

/**
 * Marks in this process's memory: lost on restart, not shared between processes. Enough for a
 * single-process receiver whose handler is itself idempotent; use the Redis store otherwise.
 * @example createReceiver({ secrets, onEvent, store: new MemoryStore() })
 */
export class MemoryStore implements DedupeStore {
  private readonly expiries = new Map<string, number>()
  private readonly maxEntries: number
  private readonly now: () => number

  constructor(options: MemoryStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000
    this.now = options.now ?? Date.now
  }

  async has(key: string): Promise<boolean> {
    const expiresAt = this.expiries.get(key)
    if (expiresAt === undefined) return false
    if (expiresAt > this.now()) return true
    this.expiries.delete(key)
    return false
  }

  async mark(key: string, ttlSeconds: number): Promise<void> {
    // Re-inserting keeps the Map in marking order, so the first entry is the oldest.
    this.expiries.delete(key)
    this.expiries.set(key, this.now() + ttlSeconds * 1000)
    while (this.expiries.size > this.maxEntries) this.expiries.delete(this.expiries.keys().next().value!)
  }

  /** Marks currently held (expired ones included until touched). */
  get size(): number {
    return this.expiries.size
  }
}
