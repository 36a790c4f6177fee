import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'

/**
 * Collects V8's young generation when the event loop goes quiet, so that a burst of work starts
 * with an empty nursery.
 *
 * Why: a scavenge copies every young object still alive, and during a webhook burst (100 takes
 * and sends in flight) that is most of the nursery: 5-9 ms on a 2-core machine, for each of the
 * burst's deliveries at once. Left to V8, the scavenge comes when the nursery fills, which is
 * inside a burst about one time in two under light load; the slowest events of a light-load run
 * were those (docs/performance.md, session 29). Collected in the quiet after the work instead, with
 * little alive, it costs about a millisecond, and the next burst starts from empty.
 *
 * Under steady load the loop is never quiet for long and V8 decides alone; a quiet spell is
 * collected once, QUIET_CHECKS checks in, and not again until work has run. `IDLE_SCAVENGE=off`
 * leaves V8 alone throughout.
 */

/** The readings and the collection, as seams (the defaults are V8's and the event loop's). */
export interface QuietScavengeDeps {
  /** Share of the time since the previous call that the event loop was busy (0..1); each call starts a new span. */
  busyShare(): number
  /** Bytes in use in the young generation. */
  youngBytes(): number
  /** Collects the young generation only (a scavenge). */
  collect(): void
}

/** Above this share of busy time in one check interval, the loop counts as working. */
export const BUSY_SHARE = 0.1
/** A nursery holding less than this is left alone: collecting it would save nothing. */
export const MIN_YOUNG_BYTES = 512 * 1024
/** Check interval: short against the gap between bursts (500 ms at 2 events/s), cheap (one utilization read). */
export const CHECK_INTERVAL_MS = 20
/**
 * Quiet checks in a row before a collection (60 ms at the default interval): a loop that works in
 * short gaps, such as a process two-thirds busy with API calls, is left to V8; collecting in each
 * gap promoted objects that would have died young.
 */
export const QUIET_CHECKS = 3

/** The decision, one check at a time: collect once when a working loop goes quiet. */
export class QuietScavenger {
  /** Whether this quiet spell was collected (or found not worth it) already. */
  private settled = false
  /** Quiet checks in a row so far. */
  private quiet = 0
  collections = 0

  constructor(private readonly deps: QuietScavengeDeps) {}

  /** One check: called every CHECK_INTERVAL_MS. Returns whether it collected. */
  check(): boolean {
    if (this.deps.busyShare() > BUSY_SHARE) {
      this.settled = false
      this.quiet = 0
      return false
    }
    this.quiet += 1
    if (this.settled || this.quiet < QUIET_CHECKS) return false
    this.settled = true
    if (this.deps.youngBytes() < MIN_YOUNG_BYTES) return false
    this.deps.collect()
    // Restarts the busy reading: the collection's own time (1-3 ms of a 20 ms interval) is not
    // work, and counted as such it made every other check collect again.
    this.deps.busyShare()
    this.collections += 1
    return true
  }
}

/** `IDLE_SCAVENGE`: `on` (default) or `off`; throws naming the variable otherwise (the start stops). */
export function idleScavengeSetting(env: NodeJS.ProcessEnv): boolean {
  const raw = (env.IDLE_SCAVENGE ?? '').trim().toLowerCase()
  if (raw === '' || raw === 'on') return true
  if (raw === 'off') return false
  throw new Error(`IDLE_SCAVENGE: expected "on" or "off", got ${JSON.stringify(env.IDLE_SCAVENGE)}`)
}

type GcFunction = (options?: { type?: 'minor' | 'major' }) => void

/**
 * V8's `gc` function, made available without a command-line flag: a context created after
 * `--expose-gc` is set has it (the main context, and the libraries in it, stay without). Null
 * when this V8 refuses.
 */
export function exposedGc(): GcFunction | null {
  const global = (globalThis as { gc?: GcFunction }).gc
  if (typeof global === 'function') return global
  try {
    v8.setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as unknown
    return typeof gc === 'function' ? (gc as GcFunction) : null
  } catch {
    return null
  }
}

/** The readings of this process. */
export function processDeps(gc: GcFunction): QuietScavengeDeps {
  let previous: EventLoopUtilization = performance.eventLoopUtilization()
  return {
    busyShare() {
      const current = performance.eventLoopUtilization()
      const share = performance.eventLoopUtilization(current, previous).utilization
      previous = current
      return share
    },
    youngBytes: () =>
      v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_used_size ?? 0,
    collect: () => gc({ type: 'minor' }),
  }
}

/** Starts the checks (an unref'd interval: it never keeps the process up); returns the stop. */
export function startQuietScavenges(deps: QuietScavengeDeps, intervalMs = CHECK_INTERVAL_MS): () => void {
  const scavenger = new QuietScavenger(deps)
  const timer = setInterval(() => scavenger.check(), intervalMs)
  timer.unref()
  return () => clearInterval(timer)
}
