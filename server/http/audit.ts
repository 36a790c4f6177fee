import type { EdgePorts } from './ports'
import type { Principal, RequestMeta } from '../auth/principal'
import { compact, makeEvent } from '../events/factory'
import type { AuditData, NamespaceEvent } from '../events/schemas'
import type { TxWrites } from '../../storage/backend'

export interface AuditRecord {
  ns: string
  action: string
  outcome: 'success' | 'failure'
  statusCode: number
  principal: Principal | null
  meta: RequestMeta
  resourceType?: string
  resourceId?: string
  errorMessage?: string
  eventData?: Record<string, unknown>
}

/**
 * Writes one audit entry to the namespace's audit log and the matching `audit.<action>`
 * event to the event log, atomically. The entry is the event's data plus its id and time.
 */
export async function recordAudit(services: Pick<EdgePorts, 'clock' | 'events'>, record: AuditRecord): Promise<void> {
  await services.events.appendAudit(record.ns, ...auditEntry(services, record))
}

/** The writes of `recordAudit`, for another transaction to make with its own (`CallAudit`). */
export function auditWrites(services: Pick<EdgePorts, 'clock' | 'events'>, record: AuditRecord): TxWrites {
  return services.events.auditWrites(record.ns, ...auditEntry(services, record))
}

/** The audit log entry of `record` (the event's data plus its id and time) and its `audit.<action>` event. */
function auditEntry(
  services: Pick<EdgePorts, 'clock'>,
  record: AuditRecord,
): [entry: AuditData & { id: string; time: string }, event: NamespaceEvent<AuditData>] {
  const data: AuditData = compact({
    action: record.action,
    outcome: record.outcome,
    statusCode: record.statusCode,
    resourceType: record.resourceType,
    resourceId: record.resourceId,
    actorUserId: record.principal?.id,
    actorTokenIdentifier: record.principal?.tokenIdentifier,
    requestId: record.meta.requestId,
    interactionId: record.principal?.interaction,
    remoteAddr: record.meta.remoteAddress,
    userAgent: record.meta.userAgent,
    requestMethod: record.meta.method,
    requestPath: record.meta.path,
    errorMessage: record.errorMessage?.slice(0, 500),
    eventData: record.eventData,
  })
  const event = makeEvent(services.clock, record.ns, `audit.${record.action}`, data)
  return [{ id: event.id, time: event.time, ...data }, event]
}
