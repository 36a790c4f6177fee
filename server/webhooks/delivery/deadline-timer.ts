import { fromCallback } from 'xstate'
import type { Clock } from '../../common/clock'
import type { DeadlineInput, DeadlineReachedEvent } from '../../../machines/webhook-delivery/types'

/** A clock that can also wait (the shared `Clock` plus timers); xstate's `SimulatedClock` fits. */
export interface TimerClock extends Clock {
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/** Wall-clock time for production use. */
export const systemTimerClock: TimerClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

// setTimeout overflows above 2^31-1 ms (about 24.8 days) and fires at once; wait in hops instead.
const MAX_TIMEOUT_MS = 2 ** 31 - 1

/**
 * A callback actor that fires `DEADLINE_REACHED` once `clock.now() >= deadline`. Because its
 * input is absolute, an actor restored from a persisted snapshot (which XState restarts with the
 * same input) waits only for the remaining time, or fires at once when the deadline passed.
 * @example machine.provide({ actors: { deadlineTimer: createDeadlineTimer(systemTimerClock) } })
 */
export function createDeadlineTimer(clock: TimerClock) {
  return fromCallback<{ type: 'noop' }, DeadlineInput>(({ input, sendBack }) => {
    let handle: unknown
    const wait = () => {
      const remaining = input.deadline - clock.now()
      if (remaining <= 0) {
        sendBack({ type: 'DEADLINE_REACHED', now: clock.now() } satisfies DeadlineReachedEvent)
        return
      }
      handle = clock.setTimeout(wait, Math.min(remaining, MAX_TIMEOUT_MS))
    }
    wait()
    return () => clock.clearTimeout(handle)
  })
}
