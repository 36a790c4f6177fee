/** Durations as the operator writes them: `500ms`, `30s`, `2m`, `1h`, `7d`. */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

export const DURATION_PATTERN = /^(\d+)(ms|s|m|h|d)$/

/**
 * Parses a duration into milliseconds; throws on anything else.
 * @example parseDuration('2m') // 120000
 */
export function parseDuration(text: string): number {
  const match = DURATION_PATTERN.exec(text.trim())
  if (!match) throw new Error(`invalid duration "${text}" (expected e.g. 500ms, 30s, 2m, 1h, 7d)`)
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
}

/** A comma-separated list of durations, e.g. WEBHOOK_RETRY_SCHEDULE. */
export function parseDurationList(text: string): number[] {
  return text.split(',').map((part) => parseDuration(part))
}
