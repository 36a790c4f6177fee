import { setImmediate as nextTurn } from 'node:timers/promises'

/** How long one piece of cooperative work may hold the event loop before it lets others run. */
export const SLICE_MS = 5

/** A slice used for less than this is still whole enough to start a step that cannot take turns (`fresh`). */
export const FRESH_MS = 1

/**
 * A budget of event-loop time for work that scales with outside input (CONTRACT.md 8): the work
 * asks `spent()` between its steps and, once the slice is used up, `pause()`s for one turn of the
 * loop (timers, I/O, `/healthz`) before it goes on with a new slice.
 * @example const slice = new TimeSlice(); for (const item of items) { step(item); if (slice.spent()) await slice.pause() }
 */
export class TimeSlice {
  private deadline = performance.now() + SLICE_MS

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Whether this slice is used up (a clock read: cheap, but not per character). */
  spent(): boolean {
    return performance.now() >= this.deadline
  }

  /** Lets the event loop run once, then starts a new slice. */
  async pause(): Promise<void> {
    await nextTurn()
    this.deadline = performance.now() + this.sliceMs
  }

  /** `pause()` when the slice is spent; a resolved promise otherwise. */
  async step(): Promise<void> {
    if (this.spent()) await this.pause()
  }

  /**
   * Before a step that cannot take turns itself (a key listing, a check over a whole
   * configuration): `pause()` unless this slice began under `FRESH_MS` ago, so that the step
   * holds the loop for its own time and hardly more, as after an unconditional `pause()`; work
   * that stays small never gives up its turn (#27: a rule upsert of a small firewall paused seven
   * times, each pause a whole turn of a loop busy with deliveries).
   */
  async fresh(): Promise<void> {
    if (this.spent() || performance.now() >= this.deadline - this.sliceMs + FRESH_MS) await this.pause()
  }
}
