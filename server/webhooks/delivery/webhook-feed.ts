import type { EventLogRepository } from '../../../storage/repositories/event-log'
import { compareCursors } from '../../../storage/repositories/event-log'
import type { CursorBatch, WebhookCursor, WebhookCursorRepository } from '../../../storage/repositories/webhook-cursors'
import type { NamespaceEvent } from '../../events/schemas'
import { logger } from '../../app/logger'
import type { WebhookRecord } from '../configuration/model'
import { takeBatch as selectBatch } from '../protocol/batching'
import type { EventEntry, LogFollower } from './log-follower'
import {
  addDrop,
  afterAnnounced,
  eventsToDrop,
  isOverflowNotice,
  mergeIntoDrop,
  noticeCount,
  overflowNotice,
  type UnannouncedDrop,
} from './overflow'
import { routes } from './routing'
import { readSelection } from './log-range'
import type { RedeliveryQueue } from './redelivery'
import { StoredCursor, type CommitWith } from './stored-cursor'
import type { TimerClock } from './deadline-timer'

interface FeedDeps {
  events: EventLogRepository<NamespaceEvent>
  cursors: WebhookCursorRepository
  follower: LogFollower
  /** Event times, and the wait before a drop's own write (`ANNOUNCE_EVERY_MS`). */
  clock: TimerClock
  /** `WEBHOOK_BUFFER`: events waiting plus the batch in flight. */
  cap: number
  /** Called after the buffered count changed (new events, a drop). */
  changed: () => void
  /** Called with the number of events a drop discarded (metrics). */
  dropped: (events: number) => void
  /** Registers running work so shutdown and tests can wait for it. */
  track: <T>(work: Promise<T>) => Promise<T>
  /** Resends and recoveries waiting for this webhook (redelivery.ts). */
  redeliveries?: RedeliveryQueue
}

/** A batch and its events; `webhook`: the document as stored when the batch was, if that write read it. */
export interface TakenBatch {
  batch: CursorBatch
  events: NamespaceEvent[]
  webhook?: WebhookRecord | null
}

/** A transaction part that reads and writes nothing: `complete`'s caller writes its own alone. */
const NOTHING_ALONGSIDE = { keys: [], assume: new Map(), body: () => ({ writes: {}, result: undefined }) }

/** Entries scanned past a quiet cursor before it is stored, so a restart does not rescan them. */
const ADVANCE_EVERY = 1_000

/**
 * A drop is announced by the next cursor write (a take carries it), and by a write of its own only
 * when no cursor write came for this long. Announced at once after every drop, a webhook whose
 * buffer stays full wrote its cursor and a notice for every read of the log: about 240 µs of the
 * process's CPU per dropped event, under the load that fills buffers (docs/performance.md, session 21).
 */
export const ANNOUNCE_EVERY_MS = 1_000

/**
 * One webhook's view of its namespace's event log, in the process that owns its actor: the
 * matching entries after its cursor (its buffer, kept in memory; the log holds the events), the
 * batch in flight, and the cap. Every write of the cursor goes through one queue, so taking a
 * batch and dropping at the cap never interleave: a drop is counted from the very entries it
 * moves the cursor past, and announced in the same write that moves it.
 */
export class WebhookFeed {
  private pending: EventEntry[] = []
  private scannedTo: string | null = null
  private skipped = 0
  private batchEvents: NamespaceEvent[] | null = null
  /** Drops not yet written: counted here, announced with the next cursor write. */
  private unannounced: UnannouncedDrop | null = null
  /** Overflow notices appended but not yet read back (id -> count): they hold a slot each. */
  private readonly noticesInTransit = new Map<string, number>()
  /**
   * The one overflow notice after the cursor that counts (stored with the cursor as `notice`);
   * any other one read is merged into it already and skipped. Null: none written yet.
   */
  private currentNotice: string | null = null
  /** Events of a batch being written: out of `pending` already, not yet in the stored cursor's batch. */
  private taking = 0
  private catchingUp: EventEntry[][] | null = []
  /** When this process last started a cursor write (the clock's time), for `ANNOUNCE_EVERY_MS`. */
  private lastWriteAt = -Infinity
  /** A drop's own write is waiting for its time (a timer) or in the write queue. */
  private announceTimer: unknown = null
  private announceQueued = false
  private readonly live = (entries: EventEntry[]) =>
    this.catchingUp ? this.catchingUp.push(entries) : this.ingest(entries)

  private readonly cursor: StoredCursor

  constructor(
    readonly ns: string,
    readonly id: string,
    private webhook: WebhookRecord | null,
    private readonly deps: FeedDeps,
  ) {
    this.cursor = new StoredCursor(ns, id, deps.cursors, deps.track)
  }

  /** Loads the cursor and reads the log after it; live entries are taken in order once caught up. */
  async start(): Promise<void> {
    const loaded = await this.cursor.load()
    this.scannedTo = loaded.cursor
    this.currentNotice = loaded.notice ?? null
    await this.deps.redeliveries?.load()
    const liveAfter = await this.deps.follower.follow(this.ns, this.live)
    let after = this.cursor.current.cursor
    while (compareCursors(after, liveAfter) < 0) {
      const page = await this.deps.events.read(this.ns, after, 2_000)
      if (page.length === 0) break
      this.ingest(
        page.filter((entry) => compareCursors(entry.cursor, liveAfter) <= 0),
        false,
      )
      after = page[page.length - 1].cursor
    }
    const queued = this.catchingUp ?? []
    this.catchingUp = null
    for (const entries of queued) this.ingest(entries, false)
    this.enforceCap()
  }

  /**
   * Stops reading the log. A drop not yet announced is not written: the stored cursor is still
   * before the dropped events, so whoever runs the webhook next reads them again.
   */
  stop(): void {
    this.deps.follower.unfollow(this.ns, this.live)
    if (this.announceTimer !== null) this.deps.clock.clearTimeout(this.announceTimer)
    this.announceTimer = null
  }

  /** The subscription changed (or the webhook was deleted: null). Buffered events stay. */
  setWebhook(webhook: WebhookRecord | null): void {
    this.webhook = webhook
  }

  /** Events waiting, the batch in flight included. */
  buffered(): number {
    return (
      this.pending.length +
      this.inFlight() +
      (this.deps.redeliveries?.waiting(this.cursor.current.batch?.deliveryId) ?? 0)
    )
  }

  /** Re-reads the redelivery queue (a resend or recover was queued, maybe by another process). */
  async reloadRedeliveries(): Promise<void> {
    await this.cursor.serial(() => this.deps.redeliveries?.load())
  }

  private inFlight(): number {
    return this.taking + (this.cursor.current.batch?.eventIds.length ?? 0)
  }

  private ingest(entries: EventEntry[], enforce = true): void {
    let added = 0
    // Entries come in log order: only a leading part can have been seen already.
    let start = 0
    while (start < entries.length && compareCursors(entries[start].cursor, this.scannedTo) <= 0) start++
    for (let index = start; index < entries.length; index++) {
      const entry = entries[index]
      this.scannedTo = entry.cursor
      const event = entry.value
      if (isOverflowNotice(event)) {
        this.noticesInTransit.delete(event.id)
        // Merged into the current notice (this webhook's), or another webhook's: never delivered here.
        if (this.currentNotice !== null && event.id !== this.currentNotice) {
          this.skipped++
          continue
        }
      }
      if (this.webhook && routes(event, this.webhook)) {
        this.pending.push(entry)
        added++
      } else this.skipped++
    }
    if (!enforce) return
    this.enforceCap()
    if (added > 0) this.deps.changed()
    if (this.pending.length === 0 && this.skipped >= ADVANCE_EVERY) void this.cursor.serial(() => this.advanceQuiet())
  }

  /** Past the cap, the oldest waiting events leave the buffer now; the write announcing it follows. */
  private enforceCap(): void {
    const occupancy = {
      waiting: this.pending.length,
      inFlight: this.inFlight(),
      noticesInTransit: this.noticesInTransit.size,
    }
    const over = eventsToDrop(occupancy, this.deps.cap)
    if (over === 0) return
    this.unannounced = addDrop(this.unannounced, this.pending.splice(0, over))
    this.deps.changed()
    this.announceSoon()
  }

  /**
   * Queues the write announcing the unannounced drop, now if no cursor write started in the last
   * `ANNOUNCE_EVERY_MS`, else when that much time has passed since the last one (by then a take
   * has usually announced it, and the write finds nothing to do).
   */
  private announceSoon(): void {
    if (this.announceTimer !== null || this.announceQueued) return
    const wait = this.lastWriteAt + ANNOUNCE_EVERY_MS - this.deps.clock.now()
    if (wait > 0) {
      this.announceTimer = this.deps.clock.setTimeout(() => {
        this.announceTimer = null
        if (this.unannounced) this.announceSoon()
      }, wait)
      return
    }
    this.announceQueued = true
    // Failures are logged by the write queue; nothing here waits for the write.
    void this.cursor.serial(() => {
      this.announceQueued = false
      return this.unannounced ? this.commit(this.cursor.current) : undefined
    })
  }

  /**
   * Stores `next` (moved past any unannounced drop) together with the drop's notice, only when
   * the stored cursor is still the one this process wrote last. `readDocument`: the webhook's
   * document is read in the same write and returned (stored-cursor.ts). Call inside `serial`.
   */
  private async commit(
    next: WebhookCursor,
    readDocument = false,
    via?: CommitWith,
  ): Promise<WebhookRecord | null | undefined> {
    this.lastWriteAt = this.deps.clock.now()
    if (this.unannounced) this.mergeWaitingNotices()
    const drop = this.unannounced
    const { notice: _stored, ...base } = next
    const moved = drop && compareCursors(drop.last, base.cursor) > 0 ? { ...base, cursor: drop.last } : base
    const notice =
      drop &&
      overflowNotice(
        this.deps.clock,
        this.ns,
        this.id,
        drop,
        this.buffered() + this.noticesInTransit.size + 1,
        this.deps.cap,
      )
    // In transit and current from now: the notice may be read back before the write below returns.
    // Should the write fail, it stays current (never appended, it only makes the merged ones skipped).
    if (notice) {
      this.noticesInTransit.set(notice.id, drop.reported)
      this.currentNotice = notice.id
    }
    const target: WebhookCursor = this.currentNotice ? { ...moved, notice: this.currentNotice } : moved
    let webhook: WebhookRecord | null | undefined
    try {
      webhook = await this.cursor.write(target, notice ? [notice] : [], readDocument, via)
    } catch (error) {
      if (notice) this.noticesInTransit.delete(notice.id)
      throw error
    }
    this.skipped = 0
    if (drop && notice) {
      // Drops counted while this write was on its way stay for the next one.
      this.unannounced = afterAnnounced(this.unannounced!, drop)
      this.deps.dropped(drop.events)
      logger.warn('webhook buffer overflow', {
        namespace: this.ns,
        webhook: this.id,
        dropped: drop.reported,
        buffered: this.buffered(),
      })
    }
    return webhook
  }

  /**
   * One notice per gap: every overflow notice still waiting (read and not in a batch, or on its
   * way back) leaves the buffer and its count joins the drop about to be announced. The new
   * notice becomes the current one in the same write, so the merged ones are skipped when read
   * (here, or after a restart). Should the write fail, the counts stay in the drop for the next one.
   */
  private mergeWaitingNotices(): void {
    let reported = 0
    this.pending = this.pending.filter((entry) => {
      if (!isOverflowNotice(entry.value)) return true
      reported += noticeCount(entry.value)
      return false
    })
    for (const count of this.noticesInTransit.values()) reported += count
    this.noticesInTransit.clear()
    if (reported > 0) this.unannounced = mergeIntoDrop(this.unannounced!, reported)
  }

  private async advanceQuiet(): Promise<void> {
    if (
      this.pending.length > 0 ||
      this.skipped < ADVANCE_EVERY ||
      compareCursors(this.scannedTo, this.cursor.current.cursor) <= 0
    )
      return
    await this.commit({ ...this.cursor.current, cursor: this.scannedTo })
  }

  /**
   * The batch in flight, or a new one from the front of the buffer (at most 100 events / 512 KB)
   * under a fresh delivery id: stored before it is returned, so a crash re-sends the same batch.
   */
  take(deliveryId: () => string): Promise<TakenBatch | null> {
    return this.cursor.serial(async () => {
      if (this.cursor.current.batch)
        return { batch: this.cursor.current.batch, events: await this.eventsOf(this.cursor.current.batch) }
      const redelivery = this.deps.redeliveries?.due(this.scannedTo, this.pending[0]?.cursor ?? null)
      if (redelivery) {
        const { deliveryId: id, eventIds, after, last } = redelivery
        const batch: CursorBatch = { deliveryId: id, eventIds, after, last }
        const webhook = await this.commit({ cursor: this.cursor.current.cursor, batch }, true)
        this.batchEvents = null
        return { batch, events: await this.eventsOf(batch), webhook }
      }
      // A waiting redelivery goes after what was buffered when it was asked for, before anything later.
      const boundary = this.deps.redeliveries?.boundary()
      const head =
        boundary === undefined
          ? this.pending.slice(0, 100)
          : this.pending.slice(0, 100).filter((entry) => compareCursors(entry.cursor, boundary) <= 0)
      const events = await selectBatch(head.map((entry) => entry.value))
      if (events.length === 0) {
        if (this.unannounced) await this.commit(this.cursor.current)
        return null
      }
      const last = head[events.length - 1].cursor
      const batch: CursorBatch = {
        deliveryId: deliveryId(),
        eventIds: events.map((event) => event.id),
        after: this.cursor.current.cursor,
        last,
      }
      // Out of the buffer before the write, so a drop counted meanwhile never takes them.
      const taken = this.pending.splice(0, events.length)
      this.taking = taken.length
      let webhook: WebhookRecord | null | undefined
      try {
        webhook = await this.commit(
          { cursor: compareCursors(last, this.cursor.current.cursor) > 0 ? last : this.cursor.current.cursor, batch },
          true,
        )
      } catch (error) {
        this.pending.unshift(...taken)
        throw error
      } finally {
        this.taking = 0
      }
      this.batchEvents = events
      return { batch, events, webhook }
    })
  }

  /** The batch in flight and its events when it is still `deliveryId`'s; null otherwise. */
  async batch(deliveryId: string): Promise<{ batch: CursorBatch; events: NamespaceEvent[] } | null> {
    const batch = this.cursor.current.batch
    if (batch?.deliveryId !== deliveryId) return null
    return { batch, events: await this.eventsOf(batch) }
  }

  /**
   * The batch is done (delivered, or failed for good): the buffer moves on. `via`: the cursor
   * write goes out in that transaction (the attempt's record, so both land or neither), which
   * runs on its own when the batch is no longer the one in flight.
   */
  complete(deliveryId: string, via?: CommitWith): Promise<void> {
    return this.cursor.serial(async () => {
      if (this.cursor.current.batch?.deliveryId !== deliveryId) {
        await via?.(NOTHING_ALONGSIDE)
        return
      }
      await this.commit({ cursor: this.cursor.current.cursor, batch: null }, false, via)
      this.batchEvents = null
      await this.deps.redeliveries?.done(deliveryId)
    })
  }

  /** Re-reads a batch from the log (after a restart); events past retention are gone. */
  private async eventsOf(batch: CursorBatch): Promise<NamespaceEvent[]> {
    this.batchEvents ??= await readSelection(this.deps.events, this.ns, batch)
    return this.batchEvents
  }
}
