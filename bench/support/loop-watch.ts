import { readFileSync } from 'node:fs'
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'

/** What held this thread's event loop over a span: its delay (1 ms resolution) and GC pauses. */
export interface LoopFigures {
  delayP99Ms: number
  delayMaxMs: number
  /** The longest gap between two ticks of a 1 ms interval, less the 1 ms: the longest task seen. */
  taskMaxMs: number
  /**
   * The most CPU this thread used between two ticks (Linux, /proc/thread-self/schedstat; else 0):
   * a late tick on a busy machine is mostly time spent waiting for a core, this is the work in it.
   */
  taskCpuMaxMs: number
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
  // A drift probe: the histogram's max has missed a single long task (the event cut read 0.0 ms
  // while it held the loop for 150 ms), a tick that came late cannot.
  let last = performance.now()
  let taskMaxMs = 0
  let lastCpu = threadCpuMs()
  let taskCpuMaxMs = 0
  const probe = setInterval(() => {
    const now = performance.now()
    const cpu = threadCpuMs()
    taskMaxMs = Math.max(taskMaxMs, now - last - 1)
    taskCpuMaxMs = Math.max(taskCpuMaxMs, cpu - lastCpu)
    last = now
    lastCpu = cpu
  }, 1)
  return {
    stop() {
      clearInterval(probe)
      taskMaxMs = Math.max(taskMaxMs, performance.now() - last - 1)
      taskCpuMaxMs = Math.max(taskCpuMaxMs, threadCpuMs() - lastCpu)
      delay.disable()
      observer.disconnect()
      return {
        delayP99Ms: delay.percentile(99) / 1e6,
        delayMaxMs: delay.max / 1e6,
        taskMaxMs,
        taskCpuMaxMs,
        gcPauses: pauses.length,
        gcMaxMs: Math.max(0, ...pauses),
        gcTotalMs: pauses.reduce((sum, pause) => sum + pause, 0),
      }
    },
  }
}

/** CPU time this thread has used (ms), from the scheduler's own count; 0 where there is none. */
function threadCpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6
  } catch {
    return 0
  }
}
