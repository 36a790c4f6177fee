import type { FirewallLogEntry } from './log-query'

/**
 * Blocks per UTC day and per package, counted from a firewall's log read newest first. Pure:
 * the reader (block-summary.ts) feeds entries and says why it stopped; this module buckets them
 * and judges whether the window is fully covered.
 */

const DAY = 86_400_000

/** The days counted: `days` whole UTC days ending with the day holding `now`. */
export interface BlockWindow {
  /** Midnight UTC (ms) of the first day. */
  start: number
  days: number
}

/** A blocked package version's tally in one firewall. */
export interface BlockedPackage {
  ecosystem: string
  packageName: string
  count: number
  /** The newest block's time and rule. */
  lastBlockedAt: string
  rule?: string
}

/** What the reader knows about how far back the log was read. */
export type TallyEnd =
  /** An entry older than the window was reached: every day is counted. */
  | { kind: 'window' }
  /**
   * The log has no older entry. Retention removes entries older than `retainedSince` (ms): days
   * before it may have been trimmed; after it the log is whole (an idle firewall has nothing).
   */
  | { kind: 'log_start'; retainedSince: number }
  /** The reader stopped at its bound of entries examined. */
  | { kind: 'scan_limit' }

export interface BlockTally {
  window: BlockWindow
  /** Blocks per day, oldest day first (`window.days` entries). */
  perDay: number[]
  packages: Map<string, BlockedPackage>
  /** Entries examined (allowed ones included). */
  scanned: number
  /** Time (ms) of the oldest entry examined inside the window, null when none was. */
  oldest: number | null
}

/** How completely a tally covers its window. */
export interface Coverage {
  complete: boolean
  /** The first instant the counts are complete from (the window start when complete). */
  from: string
  reason?: 'retention' | 'scan_limit'
}

/**
 * The window of `days` UTC days whose last day holds `now`.
 * @example blockWindow(Date.parse('2026-11-26T18:00:00Z'), 30).start // 2026-10-28T00:00:00Z
 */
export function blockWindow(now: number, days = 30): BlockWindow {
  const today = Math.floor(now / DAY) * DAY
  return { start: today - (days - 1) * DAY, days }
}

/** ISO start of each day of the window, oldest first. */
export const windowDays = (window: BlockWindow): string[] =>
  Array.from({ length: window.days }, (_, i) => new Date(window.start + i * DAY).toISOString())

export const emptyTally = (window: BlockWindow): BlockTally => ({
  window,
  perDay: new Array<number>(window.days).fill(0),
  packages: new Map(),
  scanned: 0,
  oldest: null,
})

/**
 * Counts one entry (read newest first). Returns false once the entry lies before the window, so
 * the reader may stop; entries after the window's end (a clock ahead of the log) are skipped.
 */
export function addEntry(tally: BlockTally, entry: FirewallLogEntry): boolean {
  const at = Date.parse(entry.time)
  if (Number.isNaN(at)) return true
  if (at < tally.window.start) return false
  tally.scanned++
  tally.oldest = tally.oldest === null ? at : Math.min(tally.oldest, at)
  const day = Math.floor((at - tally.window.start) / DAY)
  if (day >= tally.window.days || !entry.blocked) return true
  tally.perDay[day]++
  const key = `${entry.ecosystem}\u0000${entry.packageName}`
  const known = tally.packages.get(key)
  if (known) known.count++
  // Read newest first: the first entry seen for a package is its newest block.
  else
    tally.packages.set(key, {
      ecosystem: entry.ecosystem,
      packageName: entry.packageName,
      count: 1,
      lastBlockedAt: entry.time,
      rule: entry.rule,
    })
  return true
}

/**
 * Whether the tally covers its whole window, given why reading stopped.
 * @example coverage(tally, { kind: 'window' }) // { complete: true, from: '2026-10-28T00:00:00.000Z' }
 */
export function coverage(tally: BlockTally, end: TallyEnd): Coverage {
  const start = new Date(tally.window.start).toISOString()
  if (end.kind === 'window') return { complete: true, from: start }
  if (end.kind === 'log_start') {
    if (end.retainedSince <= tally.window.start) return { complete: true, from: start }
    return { complete: false, from: new Date(end.retainedSince).toISOString(), reason: 'retention' }
  }
  return { complete: false, from: new Date(tally.oldest ?? tally.window.start).toISOString(), reason: 'scan_limit' }
}

/** A namespace-wide entry of the most blocked packages. */
export interface TopBlocked extends BlockedPackage {
  firewalls: string[]
}

/**
 * The `limit` packages blocked most often across firewalls, most first (ties: newest block first).
 * @example topBlocked([{ firewall: 'web', tally }], 10)
 */
export function topBlocked(tallies: { firewall: string; tally: BlockTally }[], limit: number): TopBlocked[] {
  const merged = new Map<string, TopBlocked>()
  for (const { firewall, tally } of tallies)
    for (const [key, pkg] of tally.packages) {
      const known = merged.get(key)
      if (!known) merged.set(key, { ...pkg, firewalls: [firewall] })
      else {
        known.count += pkg.count
        known.firewalls.push(firewall)
        if (pkg.lastBlockedAt > known.lastBlockedAt)
          Object.assign(known, { lastBlockedAt: pkg.lastBlockedAt, rule: pkg.rule })
      }
    }
  return [...merged.values()]
    .sort((a, b) => b.count - a.count || b.lastBlockedAt.localeCompare(a.lastBlockedAt))
    .slice(0, limit)
}
