import type { Backend, TxWrites } from '../backend'
import type { NamespaceEvent } from '../../server/events/schemas'
import type { WebhookRecord } from '../../server/webhooks/configuration/model'
import { mapOf, recordOf } from '../../server/common/own'
import { parseWebhookRef, webhookKeys as keys, webhookRef } from './webhook-keys'
import type { SecretBox } from '../secrets/secret-box'
import { mapWebhookSecrets } from '../secrets/secret-fields'

interface Index {
  items: Record<string, true>
}

/** What `mutate` decides: the next document (null deletes) and writes to add to the same transaction. */
export interface WebhookChange<R> {
  next: WebhookRecord | null
  also?: (stored: WebhookRecord | null) => TxWrites
  result: R
}

/** The batch in flight of a webhook, stored outside its buffer. */
export interface StoredBatch {
  deliveryId: string
  items: NamespaceEvent[]
}

/**
 * Webhook documents, the per-namespace and global indexes, actor snapshots, event buffers and
 * the router cursor. Delivery records and metrics live in webhook-records.ts.
 */
export class WebhookRepository {
  constructor(
    readonly backend: Backend,
    private readonly secrets: SecretBox,
  ) {}

  /** Signing secrets are sealed on every write and opened on every read (storage/secrets/). */
  private open(ns: string, id: string, stored: WebhookRecord): WebhookRecord {
    return mapWebhookSecrets(stored, ns, id, (value, context) => this.secrets.open(value, context))
  }

  private seal(ns: string, id: string, record: WebhookRecord): WebhookRecord {
    return mapWebhookSecrets(record, ns, id, (value, context) => this.secrets.seal(value, context))
  }

  async get(ns: string, id: string): Promise<WebhookRecord | null> {
    const stored = await this.backend.get<WebhookRecord>(keys.webhook(ns, id))
    return stored && this.open(ns, id, stored)
  }

  async list(ns: string): Promise<WebhookRecord[]> {
    const index = await this.backend.get<Index>(keys.index(ns))
    const ids = Object.keys(index?.items ?? {})
    const docs = await this.backend.getMany<WebhookRecord>(ids.map((id) => keys.webhook(ns, id)))
    return docs
      .map((doc, i) => doc && this.open(ns, ids[i], doc))
      .filter((doc): doc is WebhookRecord => doc !== null)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
  }

  /** Every webhook of every namespace as `ns/id` references. */
  async allRefs(): Promise<string[]> {
    return Object.keys((await this.backend.get<Index>(keys.globalIndex()))?.items ?? {})
  }

  /** Loads many webhooks by reference (null for deleted ones). */
  async getMany(refs: string[]): Promise<(WebhookRecord | null)[]> {
    const parsed = refs.map(parseWebhookRef)
    const docs = await this.backend.getMany<WebhookRecord>(parsed.map(({ ns, id }) => keys.webhook(ns, id)))
    return docs.map((doc, i) => doc && this.open(parsed[i].ns, parsed[i].id, doc))
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
      const raw = values.get(docKey) as WebhookRecord | null
      const current = raw && this.open(ns, id, raw)
      const { next, also, result } = change(current)
      // Maps: a client may name a webhook `constructor`, which every plain object already "has".
      const index = mapOf<true>((values.get(indexKey) as Index | null)?.items)
      const global = mapOf<true>((values.get(globalKey) as Index | null)?.items)
      const ref = webhookRef(ns, id)
      const writes: TxWrites = { set: {}, delete: [] }
      if (next) {
        writes.set![docKey] = this.seal(ns, id, next)
        if (!index.has(id)) writes.set![indexKey] = { items: recordOf(index.set(id, true)) }
        if (!global.has(ref)) writes.set![globalKey] = { items: recordOf(global.set(ref, true)) }
      } else if (current) {
        index.delete(id)
        global.delete(ref)
        writes.set![indexKey] = { items: recordOf(index) }
        writes.set![globalKey] = { items: recordOf(global) }
        writes.delete!.push(docKey, keys.snapshot(ns, id), keys.batch(ns, id))
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

  deleteSnapshot(ns: string, id: string): Promise<void> {
    return this.backend.delete(keys.snapshot(ns, id))
  }

  // ---- buffers -----------------------------------------------------------------------

  /** The buffer's queued events and the size of the batch in flight (it is out of the queue). */
  async bufferState(ns: string, id: string): Promise<{ queued: number; inFlight: number }> {
    const [queued, batch] = await Promise.all([this.backend.queueLength(keys.buffer(ns, id)), this.getBatch(ns, id)])
    return { queued, inFlight: batch?.items.length ?? 0 }
  }

  /** Appends to the queue; past `cap` the oldest are dropped. Overflow rules: delivery/buffer-push.ts. */
  pushBuffer(ns: string, id: string, items: NamespaceEvent[], cap: number): Promise<{ length: number; dropped: number }> {
    return this.backend.queuePush(keys.buffer(ns, id), items, cap)
  }

  /** Removes and returns up to `count` events from the front of the queue, atomically. */
  popBuffer(ns: string, id: string, count: number): Promise<NamespaceEvent[]> {
    return this.backend.queuePopFront<NamespaceEvent>(keys.buffer(ns, id), count)
  }

  /** The oldest `count` buffered events (not the batch in flight). */
  peekBuffer(ns: string, id: string, count: number): Promise<NamespaceEvent[]> {
    return this.backend.queuePeek<NamespaceEvent>(keys.buffer(ns, id), count)
  }

  /**
   * The batch in flight, taking a new one from the front of the buffer when there is none:
   * its events move out of the buffer atomically, so overflow can never drop them and a
   * finished batch never removes other events. A batch left by a crash is returned again.
   */
  async takeBatch(ns: string, id: string, select: (head: NamespaceEvent[]) => NamespaceEvent[], deliveryId: () => string): Promise<StoredBatch | null> {
    const existing = await this.getBatch(ns, id)
    if (existing) return existing
    for (let attempt = 0; attempt < 20; attempt++) {
      const events = select(await this.peekBuffer(ns, id, 100))
      if (events.length === 0) return null
      const batch = { deliveryId: deliveryId(), items: events }
      // Refused only when the front moved (an overflow popped it) between the peek and the move.
      if (await this.backend.queueMoveFront(keys.buffer(ns, id), events.length, events[0].id, keys.batch(ns, id), { deliveryId: batch.deliveryId })) return batch
    }
    return null
  }

  getBatch(ns: string, id: string): Promise<StoredBatch | null> {
    return this.backend.get<StoredBatch>(keys.batch(ns, id))
  }

  /** Removes the batch once it succeeded or failed for good (only that delivery's batch). */
  async clearBatch(ns: string, id: string, deliveryId: string): Promise<void> {
    const key = keys.batch(ns, id)
    await this.backend.transact([key], (values) => {
      const current = values.get(key) as StoredBatch | null
      return { writes: current?.deliveryId === deliveryId ? { delete: [key] } : {}, result: undefined }
    })
  }

  /** Events waiting, the batch in flight included. */
  async bufferLength(ns: string, id: string): Promise<number> {
    const [length, batch] = await Promise.all([this.backend.queueLength(keys.buffer(ns, id)), this.getBatch(ns, id)])
    return length + (batch?.items.length ?? 0)
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
