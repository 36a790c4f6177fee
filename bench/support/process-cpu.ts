import { readFileSync } from 'node:fs'

/** CPU seconds a process used so far (user + system), from /proc; NaN where there is no /proc. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

/** The monotonic clock (µs) the V8 profiler stamps its samples with: a profile window's bounds. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n)
