/**
 * Which queue a piece of work waits in, most urgent first: `send` (reading and signing a batch
 * taken already), `take` (taking the next batch), `record` (storing an attempt's outcome).
 */
export type WorkLane = 'send' | 'take' | 'record'
const LANES: readonly WorkLane[] = ['send', 'take', 'record']

/** Interactive work the limited work gives way to: while it is busy, a lower limit applies. */
export interface GiveWayTo {
  busy(): boolean
  /** Pieces of work running at once while `busy()`. */
  limit: number
  /** Calls `listener` when it stops being busy; returns the unsubscribe. */
  onIdle(listener: () => void): () => void
}

/**
 * Runs at most `limit` pieces of work at once; the rest wait, first come first served within a
 * lane, the lanes in order of urgency.
 *
 * Why the delivery engine needs it: under a full fan-out every actor has work, and each step
 * (taking a batch, recording an attempt) is a chain of storage round trips. Their replies arrive
 * together and their continuations run as one burst of microtasks, ahead of any API request's
 * next step. Bounding the steps in flight bounds that burst, so API latency stays flat; the
 * throughput, bound by CPU rather than by how many steps wait on Redis at once, stays the same.
 * While HTTP requests are being handled (`giveWayTo`), fewer steps start: each round trip of a
 * request then waits behind a few continuations instead of dozens.
 * Why lanes: when one event reaches many webhooks at once, every actor takes a batch together;
 * first come first served, the first batch taken would wait for the other 99 takes before it is
 * sent, and recording the first deliveries would delay sending the last ones. A batch taken goes
 * out first; a record waits until no send or take runs or waits, as it only needs storing before
 * its webhook takes its next batch, which waits for it anyway.
 * Why not p-queue (issue #26): its priorities give the lane order, but one queue has one
 * concurrency, so neither the record rule (no record while a send or take runs or waits) nor the
 * separate record limit (32 of 100, measured in step-limit.ts) can be said, and its limit changes
 * only when set, where this one reads `giveWayTo.busy()` at every start. Composing two queues to
 * get them back is longer than this class. And per step it costs more: 200 actors each running
 * 500 steps (take, send, record, each one `setImmediate` hop) through 100 slots took 2.2-3.5 µs a
 * step here and 8.8-16 µs through p-queue 9.3.5 with `priority` (its nearest equivalent, without
 * the record rule); no limit at all, 0.7-1.8 µs. Four runs, 2-core machine at load 22, 2026-11-26.
 * @example const limit = new WorkLimit(32); await limit.run(() => feed.take(...), 'take')
 */
export class WorkLimit {
  private running = 0
  /** Sends and takes running: records wait until there are none (see `mayStart`). */
  private urgent = 0
  private readonly waiting: Record<WorkLane, (() => void)[]> = { send: [], take: [], record: [] }
  /** Waiting for no send or take to run or wait (`urgentDone`). */
  private readonly urgentWaiters: (() => void)[] = []
  readonly close: () => void

  constructor(
    readonly limit: number,
    private readonly giveWayTo?: GiveWayTo,
    /** Records running at once, at most. */
    readonly recordLimit = limit,
  ) {
    this.close = giveWayTo?.onIdle(() => this.startWaiting()) ?? (() => undefined)
  }

  async run<T>(work: () => Promise<T>, lane: WorkLane): Promise<T> {
    if (this.mayStart(lane)) this.enter(lane)
    // The slot is taken for the waiting work before it is woken, so none is lost or doubled.
    else await new Promise<void>((resolve) => this.waiting[lane].push(resolve))
    try {
      return await work()
    } finally {
      this.running--
      if (lane !== 'record') this.urgent--
      this.startWaiting()
    }
  }

  /**
   * Resolves once no send or take runs or waits (at once when none does): what may wait for a
   * burst's sends, as records do, without taking a slot.
   */
  urgentDone(): Promise<void> {
    if (this.urgentIdle()) return Promise.resolve()
    return new Promise((resolve) => this.urgentWaiters.push(resolve))
  }

  private urgentIdle(): boolean {
    return this.urgent === 0 && this.waiting.send.length === 0 && this.waiting.take.length === 0
  }

  /** Work running now (tests). */
  get active(): number {
    return this.running
  }

  private currentLimit(): number {
    return this.giveWayTo?.busy() ? Math.min(this.giveWayTo.limit, this.limit) : this.limit
  }

  /**
   * A free slot, and for a record no send or take running or waiting: the CPU a record costs
   * would otherwise delay the last sends of a burst, and a record is only needed before its
   * webhook's next take, which waits for it anyway.
   */
  private mayStart(lane: WorkLane): boolean {
    if (this.running >= this.currentLimit()) return false
    if (lane !== 'record') return true
    return (
      this.running - this.urgent < this.recordLimit &&
      this.urgent === 0 &&
      this.waiting.send.length === 0 &&
      this.waiting.take.length === 0
    )
  }

  private enter(lane: WorkLane): void {
    this.running++
    if (lane !== 'record') this.urgent++
  }

  /** Starts waiting work, most urgent lane first, while slots allow. */
  private startWaiting(): void {
    for (;;) {
      const lane = LANES.find((name) => this.waiting[name].length > 0)
      if (!lane || !this.mayStart(lane)) break
      this.enter(lane)
      this.waiting[lane].shift()!()
    }
    if (this.urgentWaiters.length > 0 && this.urgentIdle())
      for (const resolve of this.urgentWaiters.splice(0)) resolve()
  }
}
