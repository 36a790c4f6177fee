import type { WebhookCall } from '../ports'
import { z } from 'zod'
import { notFound } from '../../common/errors'
import { requireNamespacePermission } from '../../auth/permissions'
import type { NamespaceEvent } from '../../events/schemas'

/**
 * One event of the namespace log by id, whole: what a receiver reads when a delivery carried it
 * cut (`payloadTruncated: true`, protocol/event-fit.ts). It needs `ns:webhooks:manage`, the
 * permission that can subscribe a webhook to every event anyway.
 */

/** Event ids: `evt-` and the time-ordered rest (common/ids.ts). */
export const EventId = z.string().regex(/^evt-[A-Za-z0-9]{1,64}$/, 'an event id: evt- then letters and digits')

/** How much earlier than its id's time another writer's events may stand after it in the log. */
const SKEW_MS = 5 * 60_000
/** Entries a lookup reads at most (newest first): the cost of a lookup is bounded whatever the id. */
const MAX_SCANNED = 50_000

/** The time an id was made at (ms), or null for an id not made by `newId`. */
function timeOfId(id: string): number | null {
  const stamp = id.slice(4, 13)
  if (!/^[0-9a-z]{9}$/.test(stamp)) return null
  const time = Number.parseInt(stamp, 36)
  return Number.isSafeInteger(time) ? time : null
}

/**
 * The event `id` as stored, or 404 once the log no longer holds it (past `LOG_RETENTION`, or
 * further back than a lookup reads).
 * @example await getEvent(ctx, 'evt-0mwxk099k9d31b11db7251c49') // { id, type, time, namespace, data }
 */
export async function getEvent(ctx: WebhookCall, id: string): Promise<NamespaceEvent> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  const time = timeOfId(id)
  const event = await ctx.services.events.find(ctx.ns, id, time === null ? -Infinity : time - SKEW_MS, MAX_SCANNED)
  if (!event) throw notFound('event', id)
  return event
}
