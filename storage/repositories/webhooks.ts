import { mergeWrites } from '../tx-part'
import type { Backend, TxWrites } from '../backend'
import type { WebhookRecord } from '../model/webhook'
import { mapOf, recordOf } from '../own'
import { parseWebhookRef, webhookKeys as keys, webhookRef } from './webhook-keys'
import type { SecretBox } from '../secrets/secret-box'
import { mapWebhookSecrets } from '../secrets/secret-fields'
import { keys as storageKeys } from './keys'
import { WebhookCursorRepository, type WebhookCursor } from './webhook-cursors'
import { WebhookHostRepository } from './webhook-hosts'

interface Index {
  items: Record<string, true>
}

/** What `mutate` decides: the next document (null deletes) and writes to add to the same transaction. */
interface WebhookChange<R> {
  next: WebhookRecord | null
  also?: (stored: WebhookRecord | null) => TxWrites
  result: R
}

/**
 * Webhook documents, the per-namespace and global indexes, actor snapshots and (`cursors`) where
 * each webhook stands in its namespace's event log. Delivery records and metrics live in
 * webhook-records.ts.
 */
export class WebhookRepository {
  readonly cursors: WebhookCursorRepository
  /** The processes delivering webhooks, which share them evenly. */
  readonly hosts: WebhookHostRepository

  constructor(
    readonly backend: Pick<Backend, 'keyValue' | 'logs'>,
    private readonly secrets: SecretBox,
  ) {
    this.cursors = new WebhookCursorRepository(backend, (ns, id, stored) => this.open(ns, id, stored as WebhookRecord))
    this.hosts = new WebhookHostRepository(backend)
  }

  /** Signing secrets are sealed on every write and opened on every read (storage/secrets/). */
  private open(ns: string, id: string, stored: WebhookRecord): WebhookRecord {
    return mapWebhookSecrets(stored, ns, id, (value, context) => this.secrets.open(value, context))
  }

  private seal(ns: string, id: string, record: WebhookRecord): WebhookRecord {
    return mapWebhookSecrets(record, ns, id, (value, context) => this.secrets.seal(value, context))
  }

  async get(ns: string, id: string): Promise<WebhookRecord | null> {
    const stored = await this.backend.keyValue.get<WebhookRecord>(keys.webhook(ns, id))
    return stored && this.open(ns, id, stored)
  }

  async list(ns: string): Promise<WebhookRecord[]> {
    const index = await this.backend.keyValue.get<Index>(keys.index(ns))
    const ids = Object.keys(index?.items ?? {})
    const docs = await this.backend.keyValue.getMany<WebhookRecord>(ids.map((id) => keys.webhook(ns, id)))
    return docs
      .map((doc, i) => doc && this.open(ns, ids[i], doc))
      .filter((doc): doc is WebhookRecord => doc !== null)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
  }

  /** Every webhook of every namespace as `ns/id` references. */
  async allRefs(): Promise<string[]> {
    return Object.keys((await this.backend.keyValue.get<Index>(keys.globalIndex()))?.items ?? {})
  }

  /** Loads many webhooks by reference (null for deleted ones). */
  async getMany(refs: string[]): Promise<(WebhookRecord | null)[]> {
    const parsed = refs.map(parseWebhookRef)
    const docs = await this.backend.keyValue.getMany<WebhookRecord>(parsed.map(({ ns, id }) => keys.webhook(ns, id)))
    return docs.map((doc, i) => doc && this.open(parsed[i].ns, parsed[i].id, doc))
  }

  /**
   * Atomic change of one webhook and its namespace's index; `change` sees the current document
   * (null when absent) and may throw a domain error to abort with nothing written. The global
   * index lies outside the namespace (another Redis Cluster slot), so it is kept apart: the
   * reference is added before a change that may create the webhook and again after it did (a
   * concurrent delete may have removed it), and dropped after a delete or an abort only while
   * the document is absent. A crash in between leaves at most a reference to a missing webhook,
   * which the delivery host leaves without an actor (it adopts only a webhook whose document it
   * finds: a reference also precedes every creation, its document and cursor committed after it).
   */
  async mutate<R>(ns: string, id: string, change: (current: WebhookRecord | null) => WebhookChange<R>): Promise<R> {
    const docKey = keys.webhook(ns, id)
    const indexKey = keys.index(ns)
    const ref = webhookRef(ns, id)
    // A new webhook starts at the end of the log: what was appended before it is not its business.
    const [tail] = await this.backend.logs.range(storageKeys.eventLog(ns), { limit: 1, newestFirst: true })
    const start: WebhookCursor = { cursor: tail?.cursor ?? null, batch: null }
    let outcome = 'other' as 'created' | 'deleted' | 'other'
    const preAdded = (await this.backend.keyValue.get(docKey)) === null
    if (preAdded) await this.updateGlobalIndex(ref, true)
    const committed = this.backend.keyValue.transact([docKey, indexKey], (values) => {
      const raw = values.get(docKey) as WebhookRecord | null
      const current = raw && this.open(ns, id, raw)
      const { next, also, result } = change(current)
      // Maps: a client may name a webhook `constructor`, which every plain object already "has".
      const index = mapOf<true>((values.get(indexKey) as Index | null)?.items)
      const writes: TxWrites = { set: {}, delete: [] }
      outcome = next && !current ? 'created' : !next && current ? 'deleted' : 'other'
      if (next) {
        writes.set![docKey] = this.seal(ns, id, next)
        if (!current) writes.set![keys.cursor(ns, id)] = start
        if (!index.has(id)) writes.set![indexKey] = { items: recordOf(index.set(id, true)) }
      } else if (current) {
        index.delete(id)
        writes.set![indexKey] = { items: recordOf(index) }
        writes.delete!.push(docKey, keys.snapshot(ns, id), keys.cursor(ns, id))
      }
      const extra = also?.(next) ?? {}
      return {
        writes: mergeWrites(writes, extra),
        result,
      }
    })
    try {
      const result = await committed
      if (outcome === 'created') await this.updateGlobalIndex(ref, true)
      else if (outcome === 'deleted' || preAdded) await this.updateGlobalIndex(ref, false)
      return result
    } catch (error) {
      if (preAdded) await this.updateGlobalIndex(ref, false)
      throw error
    }
  }

  /**
   * Drops a reference of the global index whose webhook is absent: what a process that stopped
   * between a delete's commit and the reference's removal left. Nothing changes while the
   * document exists. The caller waits well past any creation in progress (a reference precedes
   * every creation, and a creation writes it again once its document committed).
   */
  dropDanglingRef(ref: string): Promise<void> {
    return this.updateGlobalIndex(ref, false)
  }

  /** Adds or removes one `ns/id` reference of the global index (removal only while the webhook is absent). */
  private async updateGlobalIndex(ref: string, present: boolean): Promise<void> {
    const globalKey = keys.globalIndex()
    const { ns, id } = parseWebhookRef(ref)
    await this.backend.keyValue.transact([globalKey], async (values) => {
      const global = mapOf<true>((values.get(globalKey) as Index | null)?.items)
      if (global.has(ref) === present) return { writes: {}, result: undefined }
      if (!present && (await this.backend.keyValue.get(keys.webhook(ns, id))) !== null)
        return { writes: {}, result: undefined }
      if (present) global.set(ref, true)
      else global.delete(ref)
      return { writes: { set: { [globalKey]: { items: recordOf(global) } } }, result: undefined }
    })
  }

  // ---- actor snapshots ---------------------------------------------------------------

  loadSnapshot(ns: string, id: string): Promise<unknown | null> {
    return this.backend.keyValue.get<unknown>(keys.snapshot(ns, id))
  }

  loadSnapshots(refs: string[]): Promise<(unknown | null)[]> {
    return this.backend.keyValue.getMany<unknown>(
      refs.map((ref) => keys.snapshot(parseWebhookRef(ref).ns, parseWebhookRef(ref).id)),
    )
  }

  saveSnapshot(ns: string, id: string, snapshot: unknown): Promise<void> {
    return this.backend.keyValue.set(keys.snapshot(ns, id), snapshot)
  }

  deleteSnapshot(ns: string, id: string): Promise<void> {
    return this.backend.keyValue.delete(keys.snapshot(ns, id))
  }
}
