import { compareCursors, type EventLogRepository } from '../../../storage/repositories/event-log'
import type { NamespaceEvent } from '../../events/schemas'

/** Events named by id within a range of a namespace log: after `after`, up to `last` (inclusive). */
interface LogSelection {
  eventIds: string[]
  after: string | null
  last: string
}

/**
 * Reads a selection back from the log, in log order. Fewer events than asked for means the log
 * no longer holds some of them (retention).
 * @example await readSelection(events, 'acme', batch) // the batch's events, as sent
 */
export async function readSelection(
  events: EventLogRepository<NamespaceEvent>,
  ns: string,
  selection: LogSelection,
): Promise<NamespaceEvent[]> {
  const wanted = new Set(selection.eventIds)
  const found: NamespaceEvent[] = []
  let after = selection.after
  while (found.length < wanted.size) {
    const page = await events.read(ns, after, 1_000)
    for (const entry of page)
      if (compareCursors(entry.cursor, selection.last) <= 0 && wanted.has(entry.value.id)) found.push(entry.value)
    if (page.length === 0 || compareCursors(page[page.length - 1].cursor, selection.last) >= 0) break
    after = page[page.length - 1].cursor
  }
  return found
}
