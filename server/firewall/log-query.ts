import type { DecisionOutcome } from './rules/evaluate'
import type { FirewallDecisionData } from '../events/schemas'

/**
 * One firewall log entry (CONTRACT section 3): `id`, `time` and the fields of spec 6.3.
 * `rule` is absent on a plain allow (no rule matched); `outcome` says which of the four
 * decisions it was.
 */
export type FirewallLogEntry = Omit<FirewallDecisionData, 'rule'> & {
  id: string
  time: string
  outcome: DecisionOutcome
  rule?: string
}

/** Filters of `GET /v1/{ns}/config/{fw}/log`. */
export interface FirewallLogFilter {
  /** Inclusive lower bound, ISO 8601. */
  since?: string
  /** Exclusive upper bound, ISO 8601. */
  until?: string
  /** Exact package name. */
  packageName?: string
  blocked?: boolean
  /** Exact request id (`req-...`, what a block message tells the developer to quote). */
  requestId?: string
}

/**
 * Whether an entry passes the filter. Pure; times compare as instants, not strings.
 * @example entries.filter((e) => matchesLogFilter(e, { blocked: true }))
 */
export function matchesLogFilter(entry: FirewallLogEntry, filter: FirewallLogFilter): boolean {
  const time = Date.parse(entry.time)
  if (filter.since !== undefined && time < Date.parse(filter.since)) return false
  if (filter.until !== undefined && time >= Date.parse(filter.until)) return false
  if (filter.packageName !== undefined && entry.packageName !== filter.packageName) return false
  if (filter.blocked !== undefined && entry.blocked !== filter.blocked) return false
  if (filter.requestId !== undefined && entry.request !== filter.requestId) return false
  return true
}

/**
 * True when an entry, read newest first, is older than anything the filter can still match,
 * so a scan may stop early.
 */
export function isBeforeWindow(entry: FirewallLogEntry, filter: FirewallLogFilter): boolean {
  return filter.since !== undefined && Date.parse(entry.time) < Date.parse(filter.since)
}
