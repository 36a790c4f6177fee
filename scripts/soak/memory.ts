import type { Instance } from './cluster'
import { DEFAULT_TREND_LIMITS, growthProblem, mib, MiB, retainedTrend, type RetainedTrend } from '../memory/trend'

/**
 * The soak's memory check, on post-GC readings (retained heap) only:
 * - the witness process (never killed) must have a flat retained heap after its warm-up: a slope
 *   under 1 MiB per 10 minutes (a slope that adds up to less than 2 MiB over a short run is noise);
 * - every killed-and-restarted process that lived long enough must not grow by more than 16 MiB
 *   after its first 30 s (a leak of the kind seen before: 1-2 MiB per second).
 */
export interface MemoryVerdict {
  witness: (RetainedTrend & { pid: number }) | null
  violations: string[]
}

/** The witness's warm-up: 5 minutes, or the first third of a shorter life. */
export function witnessWarmupMs(lifeMs: number): number {
  return Math.min(300_000, Math.floor(lifeMs / 3))
}

const RESTARTED_WARMUP_MS = 30_000
const RESTARTED_LIMITS = { limitPer10Min: DEFAULT_TREND_LIMITS.limitPer10Min, noise: 16 * MiB }

export function memoryVerdict(instances: Instance[]): MemoryVerdict {
  const violations: string[] = []
  let witness: MemoryVerdict['witness'] = null
  for (const instance of instances) {
    const samples = instance.samples
    if (samples.length < 2) continue
    const life = samples.at(-1)!.at - samples[0].at
    if (instance.witness) {
      const trend = retainedTrend(samples, witnessWarmupMs(life))
      witness = { ...trend, pid: instance.pid }
      if (trend.slopePer10Min === null)
        violations.push(`witness pid ${instance.pid}: too few memory samples after warm-up (${trend.samples})`)
      const problem = growthProblem(trend)
      if (problem) violations.push(`witness pid ${instance.pid} (slot ${instance.slot}): ${problem}`)
    } else {
      const problem = growthProblem(retainedTrend(samples, RESTARTED_WARMUP_MS), RESTARTED_LIMITS)
      if (problem) violations.push(`pid ${instance.pid} (slot ${instance.slot}): ${problem}`)
    }
  }
  if (!witness && instances.some((i) => i.witness)) violations.push('the memory witness gave no samples')
  return { witness, violations }
}

/**
 * Retained heap / RSS per slot, one row per minute (the last reading of the minute); `*` marks a
 * reading from a process started within that minute (the slot was killed and restarted).
 */
export function memoryTable(instances: Instance[], startedAt: number, everyMs = 60_000): string {
  const slots = [...new Set(instances.map((i) => i.slot))].sort((a, b) => a - b)
  const all = instances.flatMap((i) => i.samples.map((s) => ({ ...s, instance: i })))
  if (!all.length) return '  (no memory samples)'
  const end = Math.max(...all.map((s) => s.at))
  const header = [
    'time',
    ...slots.map((slot) => `slot ${slot}${instances.some((i) => i.slot === slot && i.witness) ? ' (witness)' : ''}`),
  ]
  const rows: string[][] = [header]
  for (let t = 0; t <= end - startedAt + everyMs - 1; t += everyMs) {
    const row = [`${(t / 60_000).toFixed(0).padStart(3)} min`]
    for (const slot of slots) {
      const own = all.filter((s) => s.instance.slot === slot)
      const last = t === 0 ? own[0] : own.filter((s) => s.at - startedAt <= t && s.at - startedAt > t - everyMs).at(-1)
      const born = last ? last.instance.startedAt - startedAt : -1
      const restarted = t > 0 && born > t - everyMs && born <= t
      row.push(last ? `${mib(last.retainedHeap).trim()} / ${mib(last.rss).trim()}${restarted ? '*' : ' '}` : '-')
    }
    rows.push(row)
  }
  const widths = header.map((_, c) => Math.max(...rows.map((row) => row[c].length)))
  return rows.map((row) => '  ' + row.map((cell, c) => cell.padStart(widths[c])).join('  ')).join('\n')
}

/** The slope line the report prints. */
export function slopeLine(verdict: MemoryVerdict): string {
  const w = verdict.witness
  if (!w || w.slopePer10Min === null) return 'retained heap slope: - (no witness samples after warm-up)'
  return `retained heap slope (witness pid ${w.pid}, after ${(w.warmupMs / 60_000).toFixed(1)} min warm-up, ${w.samples} samples over ${(w.spanMs / 60_000).toFixed(1)} min): ${(w.slopePer10Min / MiB).toFixed(3)} MiB per 10 min (limit ${(DEFAULT_TREND_LIMITS.limitPer10Min / MiB).toFixed(0)} MiB per 10 min); fitted growth ${(w.fittedGrowth! / MiB).toFixed(2)} MiB`
}
