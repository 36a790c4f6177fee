import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'

/** What held this thread's event loop over a span: its delay (1 ms resolution) and GC pauses. */
export interface LoopFigures {
  delayP99Ms: number
  delayMaxMs: number
  gcPauses: number
  gcMaxMs: number
  gcTotalMs: number
}

/**
 * Watches this thread's event loop until `stop()`: a probe slowed by a long task or a GC pause on
 * the request thread shows here, one slowed by CPU taken elsewhere on the machine does not.
 * @example const watch = watchLoop(); await work(); const { delayMaxMs, gcMaxMs } = watch.stop()
 */
export function watchLoop(): { stop(): LoopFigures } {
  const delay = monitorEventLoopDelay({ resolution: 1 })
  const pauses: number[] = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push(entry.duration)
  })
  observer.observe({ entryTypes: ['gc'] })
  delay.enable()
  return {
    stop() {
      delay.disable()
      observer.disconnect()
      return {
        delayP99Ms: delay.percentile(99) / 1e6,
        delayMaxMs: delay.max / 1e6,
        gcPauses: pauses.length,
        gcMaxMs: Math.max(0, ...pauses),
        gcTotalMs: pauses.reduce((sum, pause) => sum + pause, 0),
      }
    },
  }
}
