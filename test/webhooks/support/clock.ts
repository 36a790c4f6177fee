import type { TimerClock } from '../../../server/webhooks/deadline-timer'

/** A manual clock that can say when its next timer is due, so tests can step from deadline to deadline. */
export class SteppingClock implements TimerClock {
  private readonly timers = new Map<number, { due: number; fn: () => void }>()
  private nextId = 1
  constructor(private current: number) {}

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
  /** Earliest due time of a pending timer, or null. */
  nextDue(): number | null {
    let due: number | null = null
    for (const timer of this.timers.values()) if (due === null || timer.due < due) due = timer.due
    return due
  }
  /** Sets the time to `time` and fires every timer due by then (no I/O in between). */
  fireUntil(time: number): void {
    this.current = Math.max(this.current, time)
    for (const [id, timer] of [...this.timers.entries()].sort((a, b) => a[1].due - b[1].due)) {
      if (timer.due > this.current) break
      this.timers.delete(id)
      timer.fn()
    }
  }
}

/**
 * Moves `clock` to `until`, one deadline at a time, letting all real work (HTTP, storage) finish
 * after each step: time only jumps when the system is otherwise idle.
 */
export async function runUntil(clock: SteppingClock, idle: () => Promise<void>, until: number): Promise<void> {
  for (;;) {
    await idle()
    const due = clock.nextDue()
    if (due === null || due > until) break
    clock.fireUntil(due)
  }
  clock.fireUntil(until)
  await idle()
}
