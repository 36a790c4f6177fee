import { canOnFirewall, canSeeFirewall, requireFirewallPermission } from '../auth/permissions'
import { actorOfCall } from '../auth/call-context'
import { invalid, notFound } from '../common/errors'
import type { ExposureData } from '../events/schemas'
import type { InventoryCall } from '../inventory/ports'
import { exposureData } from './detector'

export interface ExposureQuery {
  firewall?: string
  status?: 'open' | 'acknowledged'
  limit: number
  cursor?: string
}

export interface ExposurePage {
  exposures: ExposureData[]
  nextCursor: string | null
}

/** Sort key: newest detection first, then id; the cursor is the last one shown. */
const sortKey = (detectedAt: string, id: string) => `${detectedAt}\u0000${id}`

/**
 * `GET /v1/{ns}/exposures`: the exposures of the firewalls the caller may read (`fw:read`), newest
 * detection first, filtered by firewall and status, paged with an opaque cursor.
 */
export async function listExposures(ctx: InventoryCall, query: ExposureQuery): Promise<ExposurePage> {
  const readable = new Set(
    (await ctx.services.firewalls.list(ctx.ns))
      .filter((firewall) => canOnFirewall(ctx.principal, firewall, 'fw:read'))
      .map((firewall) => firewall.id),
  )
  let after: string | null = null
  if (query.cursor) {
    after = Buffer.from(query.cursor, 'base64url').toString()
    if (!after.includes('\u0000')) throw invalid('invalid_cursor', 'cursor is not one this list gave')
  }
  const chosen = [...(await ctx.services.exposures.index(ctx.ns))]
    .filter(([, entry]) => readable.has(entry.firewall))
    .filter(([, entry]) => !query.firewall || entry.firewall === query.firewall)
    .filter(([, entry]) => !query.status || entry.status === query.status)
    .map(([id, entry]) => sortKey(entry.detectedAt, id))
    .filter((key) => after === null || key < after)
    .sort()
    .reverse()
  const page = chosen.slice(0, query.limit)
  const records = await ctx.services.exposures.getMany(
    ctx.ns,
    page.map((key) => key.split('\u0000')[1]),
  )
  const more = chosen.length > page.length
  return {
    exposures: records.flatMap((record) => (record ? [exposureData(record)] : [])),
    nextCursor: more ? Buffer.from(page[page.length - 1]).toString('base64url') : null,
  }
}

/**
 * `POST /v1/{ns}/exposures/{id}/acknowledge` (needs `fw:update:exception` on its firewall): the
 * exposure is marked acknowledged, with who and when and the comment. An exposure on a firewall
 * the caller cannot read is answered as missing. Acknowledging again changes nothing.
 */
export async function acknowledgeExposure(ctx: InventoryCall, id: string, comment?: string): Promise<ExposureData> {
  const found = await ctx.services.exposures.get(ctx.ns, id)
  const firewall = found ? await ctx.services.firewalls.get(ctx.ns, found.firewall) : null
  if (!found || !firewall || !canSeeFirewall(ctx.principal, firewall)) throw notFound('exposure', id)
  requireFirewallPermission(ctx.principal, firewall, 'fw:update:exception')
  const actor = actorOfCall(ctx)
  const at = new Date(ctx.services.clock.now()).toISOString()
  const updated = await ctx.services.exposures.update(ctx.ns, id, (record) =>
    record.status === 'acknowledged'
      ? { record }
      : {
          record: {
            ...record,
            status: 'acknowledged',
            acknowledgedAt: at,
            ...(actor.userId ? { acknowledgedBy: actor.userId } : {}),
            ...(comment ? { comment } : {}),
          },
        },
  )
  if (!updated) throw notFound('exposure', id)
  return exposureData(updated)
}
