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
 * Least-squares slope of `values` over `times`, in value units per ms; null below two distinct times.
 * @example leastSquaresSlope([0, 1000, 2000], [10, 20, 30]) // 0.01
 */
export function leastSquaresSlope(times: number[], values: number[]): number | null {
  const n = times.length
  if (n < 2) return null
  const meanT = times.reduce((a, b) => a + b, 0) / n
  const meanV = values.reduce((a, b) => a + b, 0) / n
  let covariance = 0
  let variance = 0
  for (let i = 0; i < n; i++) {
    covariance += (times[i] - meanT) * (values[i] - meanV)
    variance += (times[i] - meanT) ** 2
  }
  return variance === 0 ? null : covariance / variance
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
      ? leastSquaresSlope(
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
