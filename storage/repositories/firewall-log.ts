import type { Backend } from '../backend'
import { isBeforeWindow, matchesLogFilter, type FirewallLogEntry, type FirewallLogFilter } from '../../server/firewall/log-query'
import { keys } from './keys'

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
 * A firewall's decision log, newest first. Entries are appended by the registry proxy in
 * the same transaction as their events (`keys.firewallLog`); this repository only reads.
 */
export class FirewallLogRepository {
  constructor(private readonly backend: Backend) {}

  /**
   * One page of entries matching `filter`, newest first, starting below `cursor`. When the
   * scan limit is hit before the page fills, the cursor lets the client continue.
   */
  async page(ns: string, firewallId: string, filter: FirewallLogFilter, limit: number, cursor?: string | null): Promise<FirewallLogPage> {
    const log = keys.firewallLog(ns, firewallId)
    const entries: FirewallLogEntry[] = []
    let before = cursor ?? null
    let scanned = 0
    while (entries.length < limit && scanned < MAX_SCANNED) {
      const batch = await this.backend.logRange<FirewallLogEntry>(log, { before, limit: BATCH, newestFirst: true })
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
}
