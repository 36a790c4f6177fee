import type { Severity } from '../firewall/schema'

/**
 * CVSS v3.0/v3.1 base score from a vector string, per the FIRST specification
 * (https://www.first.org/cvss/v3.1/specification-document, section 7.1). Only the base
 * metrics matter here: temporal and environmental metrics in the vector are ignored.
 */

const WEIGHTS = {
  AV: { N: 0.85, A: 0.62, L: 0.55, P: 0.2 },
  AC: { L: 0.77, H: 0.44 },
  UI: { N: 0.85, R: 0.62 },
  CIA: { H: 0.56, L: 0.22, N: 0 },
} as const

// Privileges Required weighs more when the scope changes (spec table 16).
const PR_UNCHANGED = { N: 0.85, L: 0.62, H: 0.27 } as const
const PR_CHANGED = { N: 0.85, L: 0.68, H: 0.5 } as const

const BASE_METRICS = ['AV', 'AC', 'PR', 'UI', 'S', 'C', 'I', 'A'] as const

/**
 * The v3.1 Roundup: smallest number with one decimal that is >= input, computed on integers
 * so that floating-point noise (e.g. 4.000000001) does not round up a whole tenth.
 */
function roundUp(input: number): number {
  const intInput = Math.round(input * 100_000)
  if (intInput % 10_000 === 0) return intInput / 100_000
  return (Math.floor(intInput / 10_000) + 1) / 10
}

function pick<T extends Record<string, number>>(table: T, key: string | undefined): number | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key as keyof T] : undefined
}

/**
 * Computes the base score of a CVSS v3.x vector; `null` when the vector is not v3 or lacks a
 * base metric.
 * @example cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H') // 9.8
 */
export function cvss3BaseScore(vector: string): number | null {
  const parts = vector.trim().split('/')
  if (!/^CVSS:3\.[01]$/.test(parts[0] ?? '')) return null
  const metrics = new Map<string, string>()
  for (const part of parts.slice(1)) {
    const [key, value] = part.split(':')
    if (key && value && !metrics.has(key)) metrics.set(key, value)
  }
  if (!BASE_METRICS.every((metric) => metrics.has(metric))) return null
  const scope = metrics.get('S')
  if (scope !== 'U' && scope !== 'C') return null
  const changed = scope === 'C'

  const av = pick(WEIGHTS.AV, metrics.get('AV'))
  const ac = pick(WEIGHTS.AC, metrics.get('AC'))
  const pr = pick(changed ? PR_CHANGED : PR_UNCHANGED, metrics.get('PR'))
  const ui = pick(WEIGHTS.UI, metrics.get('UI'))
  const c = pick(WEIGHTS.CIA, metrics.get('C'))
  const i = pick(WEIGHTS.CIA, metrics.get('I'))
  const a = pick(WEIGHTS.CIA, metrics.get('A'))
  if ([av, ac, pr, ui, c, i, a].some((weight) => weight === undefined)) return null

  const iss = 1 - (1 - c!) * (1 - i!) * (1 - a!)
  const impact = changed ? 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15) : 6.42 * iss
  const exploitability = 8.22 * av! * ac! * pr! * ui!
  if (impact <= 0) return 0
  const raw = changed ? 1.08 * (impact + exploitability) : impact + exploitability
  return roundUp(Math.min(raw, 10))
}

/**
 * Maps a CVSS score to the GitHub-style severity: low < 4, moderate < 7, high < 9, critical.
 * A score of 0 ("none") still maps to low: an advisory exists, so it is at least low.
 */
export function severityFromScore(score: number): Severity {
  if (score < 4) return 'low'
  if (score < 7) return 'moderate'
  if (score < 9) return 'high'
  return 'critical'
}

/** Lowest CVSS score of each severity band, to compare a severity-only advisory with `minCvss`. */
export const SEVERITY_MIN_SCORE: Record<Severity, number> = { low: 0.1, moderate: 4, high: 7, critical: 9 }

/** Rank for comparing severities (`critical` highest). */
export const SEVERITY_RANK: Record<Severity, number> = { low: 1, moderate: 2, high: 3, critical: 4 }
