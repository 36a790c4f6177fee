import type { Backend, TxWrites } from '../backend'
import type { TxPart } from '../tx-part'
import type { StoredEvent } from '../model/events'
import type { WebhookRecord } from '../model/webhook'
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
  /**
   * The webhook's last overflow notice: after `cursor`, any other one is merged into it already
   * (one notice per gap, server/webhooks/delivery/overflow.ts) and skipped when read.
   */
  notice?: string
}

/** What `update` decides: the next cursor, events appended in the same write, and the result. */
interface CursorChange<R> {
  next: WebhookCursor
  events?: StoredEvent[]
  result: R
}

/** The cursor stored under `key`, with the events appended in the same write. */
function cursorWrites(key: string, next: WebhookCursor, events: StoredEvent[] | undefined): TxWrites {
  return { set: { [key]: next }, ...(events?.length ? { events } : {}) }
}

export const START_CURSOR: WebhookCursor = { cursor: null, batch: null }

/** A webhook document as stored (secrets sealed) and as opened for use. */
export interface HeldDocument {
  stored: unknown
  webhook: WebhookRecord
}

/** Opens a stored document (its sealed secrets) for use. */
type OpenDocument = (ns: string, id: string, stored: unknown) => WebhookRecord

/** Webhook cursors: one small document per webhook, changed atomically (compare-and-set). */
export class WebhookCursorRepository {
  constructor(
    private readonly backend: Pick<Backend, 'keyValue'>,
    private readonly open: OpenDocument,
  ) {}

  /** The stored cursor; null when the webhook has none yet. */
  get(ns: string, id: string): Promise<WebhookCursor | null> {
    return this.backend.keyValue.get<WebhookCursor>(keys.cursor(ns, id))
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
    const { keys: txKeys, body, assume } = this.part(ns, id, change, assumed)
    return this.backend.keyValue.transact(txKeys, body, assume ? { assume } : {})
  }

  /**
   * `update` as a part of a transaction another repository runs (storage/tx-part.ts): the cursor
   * moves in the same atomic write as what that transaction stores.
   */
  part<R>(
    ns: string,
    id: string,
    change: (current: WebhookCursor | null) => CursorChange<R>,
    assumed?: WebhookCursor | null,
  ): TxPart<R> {
    const key = keys.cursor(ns, id)
    return {
      keys: [key],
      ...(assumed === undefined ? {} : { assume: new Map([[key, assumed]]) }),
      body: (values) => {
        const { next, events, result } = change(values.get(key) as WebhookCursor | null)
        return { writes: cursorWrites(key, next, events), result }
      },
    }
  }

  /**
   * `update`, with the webhook's document read in the same atomic write: it comes back as it was
   * when the cursor moved (null: deleted), so an edit committed before that write is never missed.
   * `held`: the document as the caller saw it last (null: absent; undefined: unknown), assumed
   * like the cursor, so while it is current the write reads nothing first.
   */
  updateReadingDocument<R>(
    ns: string,
    id: string,
    change: (current: WebhookCursor | null) => CursorChange<R>,
    assumed: WebhookCursor | null,
    held: HeldDocument | null | undefined,
  ): Promise<{ result: R; document: HeldDocument | null }> {
    const key = keys.cursor(ns, id)
    const docKey = keys.webhook(ns, id)
    const assume = new Map<string, unknown>([[key, assumed]])
    if (held !== undefined) assume.set(docKey, held?.stored ?? null)
    return this.backend.keyValue.transact(
      [key, docKey],
      (values) => {
        const { next, events, result } = change(values.get(key) as WebhookCursor | null)
        const stored = values.get(docKey) ?? null
        // The held document itself when the write ran on it; opened afresh when it was read.
        const document =
          stored === null
            ? null
            : held && stored === held.stored
              ? held
              : { stored, webhook: this.open(ns, id, stored) }
        return { writes: cursorWrites(key, next, events), result: { result, document } }
      },
      { assume },
    )
  }

  delete(ns: string, id: string): Promise<void> {
    return this.backend.keyValue.delete(keys.cursor(ns, id))
  }
}
