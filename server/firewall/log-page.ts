import type { FirewallLogRepository } from '../../storage/repositories/firewall-log'
import { isBeforeWindow, matchesLogFilter, type FirewallLogEntry, type FirewallLogFilter } from './log-query'

export interface FirewallLogPage {
  entries: FirewallLogEntry[]
  /** Pass back as `cursor` for the next (older) page; null at the end. */
  nextCursor: string | null
}

/** Entries read per storage round trip while filtering. */
const BATCH = 200
/** Upper bound on entries examined for one page, so a sparse filter cannot scan forever. */
const MAX_SCANNED = 20_000

/**
 * One page of a firewall's entries matching `filter`, newest first, starting below `cursor`.
 * When the scan limit is hit before the page fills, the cursor lets the client continue.
 */
export async function firewallLogPage(
  log: FirewallLogRepository<FirewallLogEntry>,
  ns: string,
  firewallId: string,
  filter: FirewallLogFilter,
  limit: number,
  cursor?: string | null,
): Promise<FirewallLogPage> {
  const entries: FirewallLogEntry[] = []
  let before = cursor ?? null
  let scanned = 0
  while (entries.length < limit && scanned < MAX_SCANNED) {
    const batch = await log.range(ns, firewallId, before, BATCH)
    if (batch.length === 0) return { entries, nextCursor: null }
    for (const item of batch) {
      scanned++
      before = item.cursor
      if (isBeforeWindow(item.value, filter)) return { entries, nextCursor: null }
      if (matchesLogFilter(item.value, filter)) entries.push(item.value)
      if (entries.length === limit) break
    }
    if (batch.length < BATCH && entries.length < limit) return { entries, nextCursor: null }
  }
  return { entries, nextCursor: before }
}
