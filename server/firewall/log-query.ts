import type { DecisionOutcome } from './rules/evaluate'
import type { FirewallDecisionData } from '../events/schemas'

/**
 * One decision in the firewall log: `id`, `time` and the decision's
 * fields (the OpenAPI document). `rule` is absent on a plain allow (no rule matched); `outcome` says which of the four
 * decisions it was.
 */
export type DecisionLogEntry = Omit<FirewallDecisionData, 'rule'> & {
  id: string
  time: string
  outcome: DecisionOutcome
  rule?: string
}

/**
 * A failed call to an upstream (unreachable, timed out, refused address, 5xx, too many
 * redirects), an entry of its own in the firewall log (never an event).
 * No package is named: the call may have been for an index or a document, not a version.
 */
export interface UpstreamErrorLogEntry {
  id: string
  time: string
  outcome: 'upstream_error'
  blocked: false
  firewall: string
  firewallVersion: number
  ecosystem: string
  upstream: string
  /** Why the call failed (`ECONNREFUSED`, `status 500`, ...). */
  reason: string
  message: string
  user: string
  request: string
  /** The client request that needed the upstream. */
  method?: string
  path?: string
  interaction?: string
  userAgent?: string
  remoteAddress?: string
}

/** A firewall log entry: a decision, or an upstream failure (`outcome: 'upstream_error'`). */
export type FirewallLogEntry = DecisionLogEntry | UpstreamErrorLogEntry

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
  /** Exact principal id: the entries of one caller (a developer's own blocks). */
  user?: string
}

/**
 * Whether an entry passes the filter. Pure; times compare as instants, not strings.
 * @example entries.filter((e) => matchesLogFilter(e, { blocked: true }))
 */
export function matchesLogFilter(entry: FirewallLogEntry, filter: FirewallLogFilter): boolean {
  const time = Date.parse(entry.time)
  if (filter.since !== undefined && time < Date.parse(filter.since)) return false
  if (filter.until !== undefined && time >= Date.parse(filter.until)) return false
  if (
    filter.packageName !== undefined &&
    (entry.outcome === 'upstream_error' || entry.packageName !== filter.packageName)
  )
    return false
  if (filter.blocked !== undefined && entry.blocked !== filter.blocked) return false
  if (filter.requestId !== undefined && entry.request !== filter.requestId) return false
  if (filter.user !== undefined && entry.user !== filter.user) return false
  return true
}

/**
 * True when an entry, read newest first, is older than anything the filter can still match,
 * so a scan may stop early.
 */
export function isBeforeWindow(entry: FirewallLogEntry, filter: FirewallLogFilter): boolean {
  return filter.since !== undefined && Date.parse(entry.time) < Date.parse(filter.since)
}
