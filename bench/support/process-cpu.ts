import { readFileSync } from 'node:fs'

/** CPU seconds a process used so far, split into user and system (kernel) time, from /proc; NaN where there is no /proc. */
export function cpuSplit(pid: number | undefined): { user: number; system: number } {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    // utime and stime, in clock ticks of 1/100 s (USER_HZ).
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 }
  } catch {
    return { user: NaN, system: NaN }
  }
}

/** CPU seconds a process used so far (user + system), from /proc; NaN where there is no /proc. */
export function cpuSeconds(pid: number | undefined): number {
  const { user, system } = cpuSplit(pid)
  return user + system
}

/** The monotonic clock (µs) the V8 profiler stamps its samples with: a profile window's bounds. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n)
