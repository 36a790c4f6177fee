import { ManualClock } from '../../support/manual-clock'

/** A manual clock that can say when its next timer is due, so tests can step from deadline to deadline. */
export class SteppingClock extends ManualClock {
  /** Sets the time to `time` and fires every timer due by then (no I/O in between). */
  fireUntil(time: number): void {
    while (this.fireNext(time));
    this.current = Math.max(this.current, time)
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
