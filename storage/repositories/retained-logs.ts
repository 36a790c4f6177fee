import type { Backend } from '../backend'
import { keys } from './keys'
import { LeaseRepository, type Lease } from './leases'
import { NamespaceRepository } from './namespaces'

export type RetainedLogKind = 'event' | 'audit' | 'firewall'

/** The logs that age out, what trims them, and the lease that lets one process do it per pass. */
export class RetainedLogRepository {
  readonly lease: Lease

  constructor(private readonly backend: Pick<Backend, 'keyValue' | 'logs' | 'leases'>) {
    this.lease = new LeaseRepository(backend).retention()
  }

  /**
   * Every log retention applies to: each namespace's event and audit logs and the log of every
   * firewall ever created (the index keeps deleted ones, so their logs still age out).
   */
  async list(): Promise<{ kind: RetainedLogKind; log: string }[]> {
    const logs: { kind: RetainedLogKind; log: string }[] = []
    for (const ns of await new NamespaceRepository(this.backend).ids()) {
      logs.push({ kind: 'event', log: keys.eventLog(ns) }, { kind: 'audit', log: keys.auditLog(ns) })
      const index = await this.backend.keyValue.get<{ items: Record<string, unknown> }>(keys.firewallIndex(ns))
      for (const id of Object.keys(index?.items ?? {})) logs.push({ kind: 'firewall', log: keys.firewallLog(ns, id) })
    }
    return logs
  }

  /** Drops entries written before `beforeMs`; returns how many were removed, when known. */
  trimBefore(log: string, beforeMs: number): Promise<number> {
    return this.backend.logs.trimBefore(log, beforeMs)
  }
}
