import type { TimerClock } from '../../server/webhooks/delivery/deadline-timer'

/**
 * An injected clock that only moves when a test moves it. Subclasses decide how to step
 * (one deadline at a time with promises settling in between, or straight to a time).
 */
export class ManualClock implements TimerClock {
  private readonly timers = new Map<number, { due: number; fn: () => void }>()
  private nextId = 1
  constructor(protected current = 0) {}

  now(): number {
    return this.current
  }
  setTimeout(fn: () => void, ms: number): number {
    const id = this.nextId++
    this.timers.set(id, { due: this.current + Math.max(0, ms), fn })
    return id
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number)
  }
  /** Moves the time forward by `ms`, firing the timers due by then in order (no I/O in between). */
  advance(ms: number): void {
    const until = this.current + ms
    while (this.fireNext(until));
    this.current = until
  }
  pending(): number {
    return this.timers.size
  }
  /** Earliest due time of a pending timer, or null. */
  nextDue(): number | null {
    let due: number | null = null
    for (const timer of this.timers.values()) if (due === null || timer.due < due) due = timer.due
    return due
  }
  /** Fires the earliest timer due by `time` (moving the clock to its due time); false when none. */
  protected fireNext(time: number): boolean {
    const next = [...this.timers.entries()].sort((a, b) => a[1].due - b[1].due)[0]
    if (!next || next[1].due > time) return false
    this.timers.delete(next[0])
    this.current = Math.max(this.current, next[1].due)
    next[1].fn()
    return true
  }
}
