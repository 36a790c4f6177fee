import type { NamespaceCall } from './ports'
import { requireNamespacePermission } from '../auth/permissions'
import type { AuditData } from '../events/schemas'

type AuditEntry = AuditData & { id: string; time: string }

interface AuditQuery {
  action?: string
  outcome?: 'success' | 'failure'
  since?: string
  limit: number
  cursor?: string
}

/** How many entries one query may scan looking for matches before it returns a partial page. */
const SCAN_BUDGET = 20_000

/** The namespace audit log, newest first, filtered; `action` may be a `prefix.*`. */
export async function queryAuditLog(
  ctx: NamespaceCall,
  query: AuditQuery,
): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
  requireNamespacePermission(ctx.principal, 'ns:audit:read')
  const sinceMs = query.since ? Date.parse(query.since) : null
  const matches = (entry: AuditEntry) =>
    (!query.action ||
      (query.action.endsWith('.*')
        ? entry.action.startsWith(query.action.slice(0, -1))
        : entry.action === query.action)) &&
    (!query.outcome || entry.outcome === query.outcome)
  const entries: AuditEntry[] = []
  let before = query.cursor ?? null
  let scanned = 0
  while (entries.length < query.limit && scanned < SCAN_BUDGET) {
    const page = await ctx.services.events.auditPage<AuditEntry>(ctx.ns, before, 500)
    if (page.length === 0) return { entries, nextCursor: null }
    for (const { cursor, value } of page) {
      scanned++
      before = cursor
      if (sinceMs !== null && Date.parse(value.time) < sinceMs) return { entries, nextCursor: null }
      if (matches(value)) entries.push(value)
      if (entries.length === query.limit) return { entries, nextCursor: cursor }
    }
  }
  return { entries, nextCursor: before }
}
