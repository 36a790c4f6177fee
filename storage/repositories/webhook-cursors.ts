import type { Backend } from '../backend'
import type { NamespaceEvent } from '../../server/events/schemas'
import { webhookKeys as keys } from './webhook-keys'

/** The batch in flight: which events (ids, and the log range holding them) under which delivery id. */
export interface CursorBatch {
  deliveryId: string
  eventIds: string[]
  /** The log range holding the batch's events: after `after` (exclusive) up to `last` (inclusive). */
  after: string | null
  last: string
}

/**
 * Where a webhook stands in its namespace's event log. Every entry up to `cursor` is delivered,
 * in the batch in flight, dropped at the cap, or did not match; the webhook's buffer is the
 * matching entries after it. Null `cursor`: from the start of the log.
 */
export interface WebhookCursor {
  cursor: string | null
  batch: CursorBatch | null
}

/** What `update` decides: the next cursor, events appended in the same write, and the result. */
interface CursorChange<R> {
  next: WebhookCursor
  events?: NamespaceEvent[]
  result: R
}

export const START_CURSOR: WebhookCursor = { cursor: null, batch: null }

/** Webhook cursors: one small document per webhook, changed atomically (compare-and-set). */
export class WebhookCursorRepository {
  constructor(private readonly backend: Backend) {}

  /** The stored cursor; null when the webhook has none yet. */
  get(ns: string, id: string): Promise<WebhookCursor | null> {
    return this.backend.get<WebhookCursor>(keys.cursor(ns, id))
  }

  /**
   * Atomic change: `change` sees the stored cursor (null when absent) and returns the next one,
   * plus events (of `ns`) to append in the same write, so moving the cursor past dropped events
   * and announcing the drop commit together or not at all. `assumed`: the cursor the caller
   * wrote last (null: none stored), which saves reading it when it is still current.
   */
  update<R>(
    ns: string,
    id: string,
    change: (current: WebhookCursor | null) => CursorChange<R>,
    assumed?: WebhookCursor | null,
  ): Promise<R> {
    const key = keys.cursor(ns, id)
    return this.backend.transact(
      [key],
      (values) => {
        const { next, events, result } = change(values.get(key) as WebhookCursor | null)
        return { writes: { set: { [key]: next }, ...(events?.length ? { events } : {}) }, result }
      },
      assumed === undefined ? {} : { assume: new Map([[key, assumed]]) },
    )
  }

  delete(ns: string, id: string): Promise<void> {
    return this.backend.delete(keys.cursor(ns, id))
  }
}
