import { logger } from '../../app/logger'
import type { NamespaceEvent } from '../../events/schemas'
import type { WebhookRecord } from '../configuration/model'
import {
  START_CURSOR,
  type HeldDocument,
  type WebhookCursor,
  type WebhookCursorRepository,
} from '../../../storage/repositories/webhook-cursors'
import type { TxPart } from '../../../storage/tx-part'

/** Commits a cursor write as part of the caller's own transaction (storage/tx-part.ts). */
export type CommitWith = (part: TxPart<unknown>) => Promise<unknown>

/** The stored cursor changed under this process: another one owns the webhook now, or it was deleted. */
export class StaleCursorError extends Error {}

/**
 * One webhook's cursor as this process last stored it, and the only way to change it: writes go
 * one at a time, in order, and each commits only while the stored cursor is still the one this
 * process wrote last (compare-and-set).
 */
export class StoredCursor {
  /** What this process stored last (or loaded). */
  current: WebhookCursor = START_CURSOR
  private stored = false
  /**
   * The webhook document as the last write that read it found it (undefined: none yet). The
   * next such write assumes it: while it is current nothing is read first; after an edit the
   * write fails and reads the new one, in the same step.
   */
  private document: HeldDocument | null | undefined = undefined
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    readonly ns: string,
    readonly id: string,
    private readonly cursors: WebhookCursorRepository,
    private readonly track: <T>(work: Promise<T>) => Promise<T>,
  ) {}

  async load(): Promise<WebhookCursor> {
    const stored = await this.cursors.get(this.ns, this.id)
    this.stored = stored !== null
    this.current = stored ?? START_CURSOR
    return this.current
  }

  /** Runs `work` after every write queued before it (failures are logged here, and rejected to the caller). */
  serial<T>(work: () => Promise<T> | T): Promise<T> {
    const run = this.track(this.queue.then(work))
    this.queue = run.catch((error) =>
      logger.error('webhook cursor write failed', { namespace: this.ns, webhook: this.id, error: String(error) }),
    )
    return run
  }

  /**
   * Stores `next` with `events` appended in the same write. `readDocument`: the webhook's
   * document is read in that write too and returned (null: deleted); otherwise undefined.
   * `via`: the write goes out inside that transaction instead of on its own (not with `readDocument`).
   * Call inside `serial`.
   */
  async write(
    next: WebhookCursor,
    events: NamespaceEvent[],
    readDocument: boolean,
    via?: CommitWith,
  ): Promise<WebhookRecord | null | undefined> {
    const expected = this.current
    const change = (current: WebhookCursor | null) => {
      const same = current
        ? current.cursor === expected.cursor && current.batch?.deliveryId === expected.batch?.deliveryId
        : !this.stored
      if (!same) throw new StaleCursorError(`cursor of ${this.ns}/${this.id} changed elsewhere`)
      return { next, events, result: undefined }
    }
    const assumed = this.stored ? expected : null
    let webhook: WebhookRecord | null | undefined
    if (readDocument) {
      const { document } = await this.cursors.updateReadingDocument(this.ns, this.id, change, assumed, this.document)
      this.document = document
      webhook = document?.webhook ?? null
    } else if (via) await via(this.cursors.part(this.ns, this.id, change, assumed))
    else await this.cursors.update(this.ns, this.id, change, assumed)
    this.current = next
    this.stored = true
    return webhook
  }
}
