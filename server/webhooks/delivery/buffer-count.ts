import type { EventLogRepository } from '../../../storage/repositories/event-log'
import type { WebhookRepository } from '../../../storage/repositories/webhooks'
import type { NamespaceEvent } from '../../events/schemas'
import { isOverflowNotice } from './overflow'
import { routes } from './routing'

/**
 * A webhook's buffered count as storage holds it, for a process that may not run its actor: the
 * matching events after its cursor (merged overflow notices aside), plus the batch in flight, up
 * to `cap` (counting stops there).
 */
export async function storedBufferCount(
  events: EventLogRepository<NamespaceEvent>,
  webhooks: WebhookRepository,
  ns: string,
  id: string,
  cap: number,
): Promise<number> {
  const [webhook, cursor] = await Promise.all([webhooks.get(ns, id), webhooks.cursors.get(ns, id)])
  if (!webhook) return 0
  let count = cursor?.batch?.eventIds.length ?? 0
  let after = cursor?.cursor ?? null
  // Overflow notices other than the current one are merged into it and never delivered (overflow.ts).
  const merged = (event: NamespaceEvent) =>
    cursor?.notice !== undefined && isOverflowNotice(event) && event.id !== cursor.notice
  while (count < cap) {
    const page = await events.read(ns, after, 2_000)
    for (const entry of page) if (!merged(entry.value) && routes(entry.value, webhook)) count++
    if (page.length < 2_000) break
    after = page[page.length - 1].cursor
  }
  return Math.min(count, cap)
}
