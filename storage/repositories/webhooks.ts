import type { Backend, TxWrites } from '../backend'
import type { NamespaceEvent } from '../../server/events/schemas'
import type { WebhookRecord } from '../../server/webhooks/model'
import { EMPTY_OVERFLOW, planOverflow, type OverflowState } from '../../server/webhooks/overflow'
import { parseWebhookRef, webhookKeys as keys, webhookRef } from './webhook-keys'

interface Index {
  items: Record<string, true>
}

/** What `mutate` decides: the next document (null deletes) and writes to add to the same transaction. */
export interface WebhookChange<R> {
  next: WebhookRecord | null
  also?: (stored: WebhookRecord | null) => TxWrites
  result: R
}

/** Result of routing events into a buffer. */
export interface BufferPush {
  length: number
  /** Events discarded at the cap by this push. */
  dropped: number
  /** The overflow notice queued with this push, if any. */
  notice: NamespaceEvent | null
}

/**
 * Webhook documents, the per-namespace and global indexes, actor snapshots, event buffers and
 * the router cursor. Delivery records and metrics live in webhook-records.ts.
 */
export class WebhookRepository {
  constructor(readonly backend: Backend) {}

  get(ns: string, id: string): Promise<WebhookRecord | null> {
    return this.backend.get<WebhookRecord>(keys.webhook(ns, id))
  }

  async list(ns: string): Promise<WebhookRecord[]> {
    const index = await this.backend.get<Index>(keys.index(ns))
    const docs = await this.backend.getMany<WebhookRecord>(Object.keys(index?.items ?? {}).map((id) => keys.webhook(ns, id)))
    return docs.filter((doc): doc is WebhookRecord => doc !== null).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
  }

  /** Every webhook of every namespace as `ns/id` references. */
  async allRefs(): Promise<string[]> {
    return Object.keys((await this.backend.get<Index>(keys.globalIndex()))?.items ?? {})
  }

  /** Loads many webhooks by reference (null for deleted ones). */
  getMany(refs: string[]): Promise<(WebhookRecord | null)[]> {
    return this.backend.getMany<WebhookRecord>(refs.map((ref) => keys.webhook(parseWebhookRef(ref).ns, parseWebhookRef(ref).id)))
  }

  /**
   * Atomic change of one webhook with both indexes kept in step; `change` sees the current
   * document (null when absent) and may throw a domain error to abort with nothing written.
   */
  mutate<R>(ns: string, id: string, change: (current: WebhookRecord | null) => WebhookChange<R>): Promise<R> {
    const docKey = keys.webhook(ns, id)
    const indexKey = keys.index(ns)
    const globalKey = keys.globalIndex()
    return this.backend.transact([docKey, indexKey, globalKey], (values) => {
      const current = values.get(docKey) as WebhookRecord | null
      const { next, also, result } = change(current)
      const index = (values.get(indexKey) as Index | null) ?? { items: {} }
      const global = (values.get(globalKey) as Index | null) ?? { items: {} }
      const writes: TxWrites = { set: {}, delete: [] }
      if (next) {
        writes.set![docKey] = next
        if (!index.items[id]) writes.set![indexKey] = { items: { ...index.items, [id]: true } }
        if (!global.items[webhookRef(ns, id)]) writes.set![globalKey] = { items: { ...global.items, [webhookRef(ns, id)]: true } }
      } else if (current) {
        const { [id]: _dropped, ...rest } = index.items
        const { [webhookRef(ns, id)]: _ref, ...others } = global.items
        writes.set![indexKey] = { items: rest }
        writes.set![globalKey] = { items: others }
        writes.delete!.push(docKey, keys.snapshot(ns, id), keys.overflow(ns, id))
      }
      const extra = also?.(next) ?? {}
      return {
        writes: { set: { ...writes.set, ...extra.set }, delete: [...writes.delete!, ...(extra.delete ?? [])], logs: extra.logs, events: extra.events },
        result,
      }
    })
  }

  // ---- actor snapshots ---------------------------------------------------------------

  loadSnapshot(ns: string, id: string): Promise<unknown | null> {
    return this.backend.get<unknown>(keys.snapshot(ns, id))
  }

  loadSnapshots(refs: string[]): Promise<(unknown | null)[]> {
    return this.backend.getMany<unknown>(refs.map((ref) => keys.snapshot(parseWebhookRef(ref).ns, parseWebhookRef(ref).id)))
  }

  saveSnapshot(ns: string, id: string, snapshot: unknown): Promise<void> {
    return this.backend.set(keys.snapshot(ns, id), snapshot)
  }

  // ---- buffers -----------------------------------------------------------------------

  /**
   * Appends routed events to a webhook's buffer (cap `cap`, oldest dropped) and queues one
   * overflow notice when events were dropped (see overflow.ts). Only the router calls this.
   */
  async pushToBuffer(
    ns: string,
    id: string,
    events: NamespaceEvent[],
    cap: number,
    makeNotice: (counts: { droppedEvents: number; bufferedEvents: number }) => NamespaceEvent,
  ): Promise<BufferPush> {
    const queue = keys.buffer(ns, id)
    const [length, stored] = await Promise.all([this.backend.queueLength(queue), this.backend.get<OverflowState>(keys.overflow(ns, id))])
    const plan = planOverflow(stored ?? EMPTY_OVERFLOW, length, events.length, cap)
    const notice = plan.notice ? makeNotice(plan.notice) : null
    const result = await this.backend.queuePush(queue, notice ? [...events, notice] : events, cap)
    const next = notice ? { ...plan.next, noticeId: notice.id } : plan.next
    if (JSON.stringify(next) !== JSON.stringify(stored ?? EMPTY_OVERFLOW)) await this.backend.set(keys.overflow(ns, id), next)
    return { length: result.length, dropped: result.dropped, notice }
  }

  /** The oldest `count` buffered events. */
  peekBuffer(ns: string, id: string, count: number): Promise<NamespaceEvent[]> {
    return this.backend.queuePeek<NamespaceEvent>(keys.buffer(ns, id), count)
  }

  /** Removes the oldest `count` events (a batch that is done). */
  dropFromBuffer(ns: string, id: string, count: number): Promise<void> {
    return this.backend.queueDrop(keys.buffer(ns, id), count)
  }

  bufferLength(ns: string, id: string): Promise<number> {
    return this.backend.queueLength(keys.buffer(ns, id))
  }

  clearBuffer(ns: string, id: string): Promise<void> {
    return this.backend.queueClear(keys.buffer(ns, id))
  }

  // ---- router cursor -----------------------------------------------------------------

  async routerCursor(): Promise<string | null> {
    // Wrapped in an object: a bare digit string would come back as a number from unstorage.
    return (await this.backend.get<{ cursor: string }>(keys.routerCursor()))?.cursor ?? null
  }

  saveRouterCursor(cursor: string): Promise<void> {
    return this.backend.set(keys.routerCursor(), { cursor })
  }
}
