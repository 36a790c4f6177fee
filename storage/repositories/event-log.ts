import type { Backend, LogEntry } from '../backend'
import type { NamespaceEvent } from '../../server/events/schemas'
import { keys } from './keys'

/**
 * The namespace event log (the outbox webhooks read) and the logs written with it. Every append
 * is one transaction, so a log entry and its event are either both stored or neither.
 */
export class EventLogRepository {
  constructor(private readonly backend: Backend) {}

  /** Appends events on their own. */
  append(events: NamespaceEvent[]): Promise<void> {
    return this.backend.transact([], () => ({ writes: { events }, result: undefined }))
  }

  /** Appends an audit entry to the namespace's audit log together with its `audit.*` event. */
  appendAudit(ns: string, entry: unknown, event: NamespaceEvent): Promise<void> {
    return this.backend.transact([], () => ({
      writes: { logs: { [keys.auditLog(ns)]: [entry] }, events: [event] },
      result: undefined,
    }))
  }

  /** Appends a proxy decision to the firewall's log together with the events it caused. */
  appendDecision(ns: string, firewallId: string, entry: unknown, events: NamespaceEvent[]): Promise<void> {
    return this.backend.transact([], () => ({
      writes: { logs: { [keys.firewallLog(ns, firewallId)]: [entry] }, events },
      result: undefined,
    }))
  }

  /** Events strictly after `after`, oldest first. */
  read<T = NamespaceEvent>(after: string | null, limit: number): Promise<LogEntry<T>[]> {
    return this.backend.logRange<T>(keys.eventLog, { after, limit })
  }

  /** Calls `listener` (in this process) after events were appended anywhere the storage can see. */
  onAppended(listener: () => void): () => void {
    return this.backend.onEvents(listener)
  }

  /** Resolves once `onAppended` listeners are being notified. */
  notificationsReady(): Promise<void> {
    return this.backend.eventsReady()
  }

  /** One page of a namespace's audit log, newest first, strictly before `before`. */
  auditPage<T>(ns: string, before: string | null, limit: number): Promise<LogEntry<T>[]> {
    return this.backend.logRange<T>(keys.auditLog(ns), { before, newestFirst: true, limit })
  }
}
