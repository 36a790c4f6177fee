import type { Backend, LogEntry, TxWrites } from '../backend'
import type { StoredEvent } from '../model/events'
import { keys } from './keys'

/**
 * The event logs (the outbox webhooks read: one per namespace, each event stored once) and the
 * logs written with them. Every append is one transaction, so a log entry and its event are
 * either both stored or neither. `E` is the domain's event (server/events/schemas.ts).
 */
export class EventLogRepository<E extends StoredEvent = StoredEvent> {
  constructor(private readonly backend: Pick<Backend, 'keyValue' | 'logs' | 'signals'>) {}

  /** Appends events on their own (all of one namespace). */
  append(events: E[]): Promise<void> {
    return this.backend.keyValue.transact([], () => ({ writes: { events }, result: undefined }))
  }

  /** Appends an audit entry to the namespace's audit log together with its `audit.*` event. */
  appendAudit(ns: string, entry: unknown, event: E): Promise<void> {
    return this.backend.keyValue.transact([], () => ({ writes: this.auditWrites(ns, entry, event), result: undefined }))
  }

  /** The writes of `appendAudit`, for a transaction of another repository to make with its own. */
  auditWrites(ns: string, entry: unknown, event: E): TxWrites {
    return { logs: { [keys.auditLog(ns)]: [entry] }, events: [event] }
  }

  /** Appends a proxy decision to the firewall's log together with the events it caused. */
  appendDecision(ns: string, firewallId: string, entry: unknown, events: E[]): Promise<void> {
    return this.backend.keyValue.transact([], () => ({
      writes: { logs: { [keys.firewallLog(ns, firewallId)]: [entry] }, events },
      result: undefined,
    }))
  }

  /** Events of `ns` strictly after `after`, oldest first. */
  read<T = E>(ns: string, after: string | null, limit: number): Promise<LogEntry<T>[]> {
    return this.backend.logs.range<T>(keys.eventLog(ns), { after, limit })
  }

  /**
   * The event `id` of `ns`, read newest first and no further back than events timed before
   * `notBefore` (ms; event time, the clock the id was made with) nor past `maxScanned` entries:
   * a lookup by id costs what is newer than the event, and never more than that bound.
   */
  async find(ns: string, id: string, notBefore: number, maxScanned: number): Promise<E | null> {
    let before: string | null = null
    for (let scanned = 0; scanned < maxScanned;) {
      const page: LogEntry<E>[] = await this.backend.logs.range<E>(keys.eventLog(ns), {
        before,
        newestFirst: true,
        limit: Math.min(FIND_PAGE, maxScanned - scanned),
      })
      for (const entry of page) {
        if (entry.value.id === id) return entry.value
        if (Date.parse(entry.value.time) < notBefore) return null
      }
      if (page.length === 0) return null
      scanned += page.length
      before = page[page.length - 1].cursor
    }
    return null
  }

  /** The cursor of the newest entry of `ns`'s log; null while it is empty. */
  async lastCursor(ns: string): Promise<string | null> {
    const [last] = await this.backend.logs.range(keys.eventLog(ns), { limit: 1, newestFirst: true })
    return last?.cursor ?? null
  }

  /** Calls `listener` (in this process) with the namespace after events were appended to its log by any process. */
  onAppended(listener: (ns: string) => void): () => void {
    return this.backend.signals.onEvents(listener)
  }

  /** Resolves once `onAppended` listeners are being notified. */
  notificationsReady(): Promise<void> {
    return this.backend.signals.eventsReady()
  }

  /** One page of a namespace's audit log, newest first, strictly before `before`. */
  auditPage<T>(ns: string, before: string | null, limit: number): Promise<LogEntry<T>[]> {
    return this.backend.logs.range<T>(keys.auditLog(ns), { before, newestFirst: true, limit })
  }
}

/** Entries read per page when looking an event up by id. */
const FIND_PAGE = 1_000

/**
 * Orders two cursors of one log (Redis stream ids `ms-seq`, or the local backend's padded
 * sequence numbers); null sorts before everything.
 */
export function compareCursors(a: string | null, b: string | null): number {
  if (a === b) return 0
  if (a === null) return -1
  if (b === null) return 1
  const [aMs, aSeq = '0'] = a.split('-')
  const [bMs, bSeq = '0'] = b.split('-')
  return Number(aMs) - Number(bMs) || Number(aSeq) - Number(bSeq)
}
