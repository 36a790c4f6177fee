import type { LogEntry } from '../../../storage/backend'
import { compareCursors, type EventLogRepository } from '../../../storage/repositories/event-log'
import type { NamespaceEvent } from '../../events/schemas'
import { logger } from '../../app/logger'
import { Activity } from './activity'

export type EventEntry = LogEntry<NamespaceEvent>
type Listener = (entries: EventEntry[]) => void

interface Followed {
  listeners: Set<Listener>
  /** Cursor of the last entry handed to the listeners. */
  last: string | null
  /** Resolves once `last` is known. */
  ready: Promise<void>
  reading: boolean
  again: boolean
  /** performance.now() when the last read started. */
  readAt: number
}

/** Entries read per page. */
const PAGE = 2_000
/** Time the listeners run before other work gets its turn, on a page of more than `WHOLE_PAGE` entries. */
const SLICE_MS = 2
/**
 * A page of one entry (an event appended alone, as at light load) goes to every listener in one
 * go: a few ms for 100 webhooks, mostly one actor step each. Sliced, the first webhooks' takes
 * and sends ran in between, and the last webhooks heard of the event tens of ms later. Longer
 * pages are sliced: unsliced up to 10 entries, rule upserts under the full fan-out waited longer
 * (p99 84-107 ms against 80-91 ms).
 */
const WHOLE_PAGE = 1
/**
 * Least time between the starts of two reads of one log. Events the API emits come one append at
 * a time (an upsert appends two, a ms apart): at 500 a second, each woke a read and a hand-out to
 * every webhook of the namespace for one entry, 7% of the process's time under that load. Reads
 * this far apart take the appends of the gap together; a log appended to now and then is read at
 * once, as before.
 */
const READ_GAP_MS = 5

/**
 * Follows the event logs of the namespaces this process delivers for, reading each new entry
 * once (parsed once, shared by every webhook of the namespace). It never polls: the storage's
 * append notification (Redis pub/sub carrying the namespace, or an in-process signal) wakes it,
 * and each wake reads everything after the last entry it saw.
 */
export class LogFollower {
  private readonly followed = new Map<string, Followed>()
  private readonly activity = new Activity()
  private readonly offAppended: () => void

  constructor(private readonly events: EventLogRepository<NamespaceEvent>) {
    this.offAppended = events.onAppended((ns) => this.wake(ns))
  }

  /** Resolves once append notifications arrive (call before relying on `follow`). */
  ready(): Promise<void> {
    return this.events.notificationsReady()
  }

  /**
   * Hands every entry appended to `ns` after this call's resolution to `listener`, in log order.
   * Resolves with the cursor it starts after: entries up to it are the caller's to read.
   */
  async follow(ns: string, listener: Listener): Promise<string | null> {
    for (;;) {
      const followed = this.followed.get(ns) ?? this.start(ns)
      await followed.ready
      // The last listener may have left meanwhile (an actor retired here), taking the entry out:
      // a listener added to it would never be woken, and its webhook would get nothing more.
      if (this.followed.get(ns) !== followed) continue
      followed.listeners.add(listener)
      return followed.last
    }
  }

  private start(ns: string): Followed {
    const created: Followed = {
      listeners: new Set(),
      last: null,
      ready: Promise.resolve(),
      reading: false,
      again: false,
      readAt: Number.NEGATIVE_INFINITY,
    }
    created.ready = this.events.lastCursor(ns).then(
      (last) => {
        created.last = last
      },
      (error: unknown) => {
        // A failed first read is not kept: every later follow of the namespace would fail on it
        // (every adoption there, in this process) until its last listener left. The next reads again.
        if (this.followed.get(ns) === created) this.followed.delete(ns)
        throw error
      },
    )
    this.followed.set(ns, created)
    return created
  }

  unfollow(ns: string, listener: Listener): void {
    const followed = this.followed.get(ns)
    followed?.listeners.delete(listener)
    if (followed && followed.listeners.size === 0) this.followed.delete(ns)
  }

  /** Reads what is new in `ns`; every namespace when none is named (a safety net for lost notifications). */
  wake(ns?: string): void {
    if (ns === undefined) {
      for (const name of this.followed.keys()) this.wake(name)
      return
    }
    const followed = this.followed.get(ns)
    if (!followed) return
    if (followed.reading) {
      followed.again = true
      return
    }
    followed.reading = true
    const wait = followed.readAt + READ_GAP_MS - performance.now()
    void this.activity.track(
      (wait > 0 ? new Promise((resolve) => setTimeout(resolve, Math.ceil(wait))) : Promise.resolve())
        .then(() => {
          followed.readAt = performance.now()
          return this.drain(ns, followed)
        })
        .catch((error) => logger.error('event log read failed', { namespace: ns, error: String(error) }))
        .finally(() => {
          followed.reading = false
          if (followed.again) {
            followed.again = false
            this.wake(ns)
          }
        }),
    )
  }

  private async drain(ns: string, followed: Followed): Promise<void> {
    await followed.ready
    for (;;) {
      const entries = await this.events.read<NamespaceEvent>(ns, followed.last, PAGE)
      if (entries.length === 0 || this.followed.get(ns) !== followed) return
      followed.last = entries[entries.length - 1].cursor
      await this.handOut(followed, entries)
      if (entries.length < PAGE) return
    }
  }

  /**
   * Gives `entries` to every listener, in slices of about 2 ms with the event loop let through
   * between them: a page of 2,000 entries for 100 webhooks is 200,000 subscription checks, and
   * run in one go it held every request's I/O for tens of milliseconds. Listeners added
   * meanwhile start after this page; listeners removed meanwhile get nothing more.
   */
  private async handOut(followed: Followed, entries: EventEntry[]): Promise<void> {
    const slice = entries.length > WHOLE_PAGE ? SLICE_MS : Number.POSITIVE_INFINITY
    let sliceStart = performance.now()
    for (const listener of [...followed.listeners]) {
      if (performance.now() - sliceStart > slice) {
        await new Promise((resolve) => setImmediate(resolve))
        sliceStart = performance.now()
      }
      if (followed.listeners.has(listener)) listener(entries)
    }
  }

  /** True when a followed log holds entries not read yet (tests wait for quiet with it). */
  async behind(): Promise<boolean> {
    for (const [ns, followed] of this.followed) {
      await followed.ready
      if (compareCursors(await this.events.lastCursor(ns), followed.last) > 0) return true
    }
    return false
  }

  /** Waits until no read is running. */
  idle(): Promise<void> {
    return this.activity.idle()
  }

  async stop(): Promise<void> {
    this.offAppended()
    this.followed.clear()
    await this.activity.idle()
  }
}
