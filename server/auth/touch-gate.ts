import { LRUCache } from 'lru-cache'

/** Tokens whose last use a process remembers; 10,000 tokens in use at once from one process. */
export const TOUCHED_TOKENS = 10_000

/**
 * When a token's last-used time is due for a write: at most once per `intervalMs` per token and
 * process (keeps reads cheap). Bounded (#30): tokens come and go (short-lived CI tokens), so it
 * remembers at most `max`, least recently used dropped first; a dropped one only costs an early write.
 */
export class TouchGate {
  private readonly touched: LRUCache<string, number>

  constructor(
    private readonly intervalMs: number,
    max = TOUCHED_TOKENS,
  ) {
    this.touched = new LRUCache({ max })
  }

  /**
   * True (and noted) when `tokenId` was not touched within the interval before `now`.
   * @example gate.due('tok-1', 0) // true, then false until intervalMs has passed
   */
  due(tokenId: string, now: number): boolean {
    if ((this.touched.get(tokenId) ?? -Infinity) + this.intervalMs > now) return false
    this.touched.set(tokenId, now)
    return true
  }

  /** Tokens remembered now (at most `max`). */
  get size(): number {
    return this.touched.size
  }
}
