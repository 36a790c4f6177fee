import { performance } from 'node:perf_hooks'

/** Awaits this between slices of long work; resolves at once while the slice has time left. */
export type Pace = () => Promise<void> | void

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Cooperative pacing for long CPU work on the request thread (unzipping, parsing and indexing a
 * feed of 200,000 records): after `budgetMs` of work it yields once to the event loop, so the
 * requests served meanwhile wait at most about one budget.
 * @example const pace = pacer(2); for (const x of xs) { work(x); await pace() }
 */
export function pacer(budgetMs = 2): Pace {
  let sliceStart = performance.now()
  return () => {
    if (performance.now() - sliceStart < budgetMs) return
    return yieldToLoop().then(() => {
      sliceStart = performance.now()
    })
  }
}
