import type { Backend, LogEntry } from '../backend'
import { keys } from './keys'

/**
 * A firewall's decision log. Decisions are appended by the registry proxy in the same transaction
 * as their events (EventLogRepository.appendDecision); upstream failures, which never have events,
 * are appended here on their own. This repository reads it in raw pages.
 * Filtering and paging for clients is a domain rule (server/firewall/log-page.ts). `Entry` is the
 * domain's log entry (server/firewall/log-query.ts), stored as it is given.
 */
export class FirewallLogRepository<Entry = unknown> {
  constructor(private readonly backend: Pick<Backend, 'logs'>) {}

  /** Appends entries that carry no event (upstream failures, docs/webhooks.md). */
  async appendWithoutEvents(ns: string, firewallId: string, entries: Entry[]): Promise<void> {
    if (entries.length) await this.backend.logs.append(keys.firewallLog(ns, firewallId), entries)
  }

  /** Up to `limit` entries strictly older than `before` (from the newest when null), newest first. */
  range(ns: string, firewallId: string, before: string | null, limit: number): Promise<LogEntry<Entry>[]> {
    return this.backend.logs.range<Entry>(keys.firewallLog(ns, firewallId), {
      before,
      limit,
      newestFirst: true,
    })
  }
}
