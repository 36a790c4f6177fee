/**
 * The trend of retained heap (the heap in use right after a full GC) over time, shared by the soak
 * and bench:memory. A leak shows as a slope of retained heap; garbage V8 has not collected yet does
 * not, which is why `heapUsed` at random times (the soak's old check) could not tell them apart.
 */

/** One post-GC reading of a process. */
export interface RetainedSample {
  /** ms since epoch */
  at: number
  /** bytes in use on the V8 heap right after a full GC */
  retainedHeap: number
  rss: number
}

export const MiB = 1024 * 1024
const TEN_MINUTES = 600_000

/**
 * Theil-Sen slope of `values` over `times` (the median of the slopes between every pair of
 * readings), in value units per ms; null below two distinct times. Robust where least squares is
 * not: a post-GC reading taken while a burst of requests is in flight sits 20-30 MiB above the
 * floor, and a few such spikes late in a run tilted a least-squares fit past the limit (the
 * 30-minute soak of session 10: 1.01 MiB per 10 min from 4 spikes in 191 readings, with the floor
 * flat). The median ignores up to 29% of readings being spikes. 191 readings make 18k pairs.
 * @example theilSenSlope([0, 1000, 2000, 3000], [10, 20, 90, 40]) // 0.01
 */
export function theilSenSlope(times: number[], values: number[]): number | null {
  const slopes: number[] = []
  for (let i = 0; i < times.length; i++) {
    for (let j = i + 1; j < times.length; j++) {
      if (times[j] !== times[i]) slopes.push((values[j] - values[i]) / (times[j] - times[i]))
    }
  }
  if (slopes.length === 0) return null
  slopes.sort((a, b) => a - b)
  const middle = slopes.length >> 1
  return slopes.length % 2 ? slopes[middle] : (slopes[middle - 1] + slopes[middle]) / 2
}

export interface RetainedTrend {
  /** Samples after the warm-up that the slope is fitted to. */
  samples: number
  /** How long those samples span (ms). */
  spanMs: number
  /** Retained heap slope, bytes per 10 minutes; null with fewer than `minSamples` samples. */
  slopePer10Min: number | null
  /** The fitted growth over the span (slope x span), bytes. */
  fittedGrowth: number | null
  warmupMs: number
}

/**
 * The retained-heap slope of one process after its warm-up: the first `warmupMs` of its samples
 * (JIT code, lazily built tables and connection pools grow then, and stop) are left out.
 */
export function retainedTrend(samples: RetainedSample[], warmupMs: number, minSamples = 6): RetainedTrend {
  const start = samples[0]?.at ?? 0
  const after = samples.filter((sample) => sample.at - start >= warmupMs)
  const spanMs = after.length ? after.at(-1)!.at - after[0].at : 0
  const slope =
    after.length >= minSamples
      ? theilSenSlope(
          after.map((s) => s.at),
          after.map((s) => s.retainedHeap),
        )
      : null
  return {
    samples: after.length,
    spanMs,
    slopePer10Min: slope === null ? null : slope * TEN_MINUTES,
    fittedGrowth: slope === null ? null : slope * spanMs,
    warmupMs,
  }
}

/** What counts as growth: a slope above `limitPer10Min` that also adds up to more than `noise` over the span. */
export interface TrendLimits {
  limitPer10Min: number
  /** Post-GC readings wander by requests in flight; a short window's slope is only trusted past this much growth. */
  noise: number
}

export const DEFAULT_TREND_LIMITS: TrendLimits = { limitPer10Min: 1 * MiB, noise: 2 * MiB }

/**
 * Why the trend shows retained growth, or null when it is flat. Both conditions must hold: over a
 * long run the slope limit decides (past 20 minutes it is the stricter one); over a short window
 * the readings' noise would otherwise pass for a slope.
 * @example growthProblem({ samples: 30, spanMs: 1_500_000, slopePer10Min: 3 * MiB, fittedGrowth: 7.5 * MiB, warmupMs: 0 }) // 'retained heap grows 3.00 MiB per 10 min ...'
 */
export function growthProblem(trend: RetainedTrend, limits: TrendLimits = DEFAULT_TREND_LIMITS): string | null {
  if (trend.slopePer10Min === null || trend.fittedGrowth === null) return null
  if (trend.slopePer10Min <= limits.limitPer10Min || trend.fittedGrowth <= limits.noise) return null
  return `retained heap grows ${(trend.slopePer10Min / MiB).toFixed(2)} MiB per 10 min (limit ${(limits.limitPer10Min / MiB).toFixed(2)}), ${(trend.fittedGrowth / MiB).toFixed(1)} MiB over ${(trend.spanMs / 60_000).toFixed(1)} min after a ${(trend.warmupMs / 60_000).toFixed(1)} min warm-up`
}

/** `12.3` style MiB figure, right-aligned to `width`. */
export function mib(bytes: number | undefined, width = 6): string {
  return bytes === undefined || !Number.isFinite(bytes) ? '-'.padStart(width) : (bytes / MiB).toFixed(1).padStart(width)
}
