import type { Snapshot } from 'xstate'
import { webhookDeliveryMachine } from '../../../machines/webhook-delivery.machine'
import type { WebhookEnginePorts } from '../ports'
import { logger } from '../../app/logger'
import { parseWebhookRef } from '../../../storage/repositories/webhook-keys'
import type { WebhookSignal } from '../../../storage/ports'
import { Activity } from './activity'
import type { TimerClock } from './deadline-timer'
import { createDeliveryActors } from './adapter'
import type { DeliverySettings } from '../../../machines/webhook-delivery/types'
import { handleEmitted, reportActorMetrics } from './actor-effects'
import type { WebhookRecord } from '../configuration/model'
import type { WebhookRuntime } from './runtime'
import { startManagedActor, type Managed } from './managed-actor'
import { onMetricsCollect } from '../../observability/metrics'
import type { LogFollower } from './log-follower'
import { WebhookFeed } from './webhook-feed'
import { documentChanges } from './document-sync'
import { RedeliveryQueue } from './redelivery'
import { deliveryStepLimit } from './step-limit'
import { DeliveryLeases } from './delivery-leases'
import { DanglingRefs } from './dangling-refs'
import { takeOnBuffered } from '../../../machines/webhook-delivery/policy'

interface HostOptions {
  /** Lease owner id of this process. */
  owner: string
  leaseTtlMs: number
  clock: TimerClock
  /** Reads the namespaces' event logs for this process's feeds. */
  follower: LogFollower
  /** Monotonic clock for lease validity (delivery-leases.ts); `performance.now` by default. */
  leaseClock?: () => number
}

/**
 * Runs one delivery actor per webhook this process holds the lease for, with the webhook's feed
 * (its buffer: the matching events after its cursor in the namespace log). Snapshots are stored
 * after every transition; adoption (start-up or takeover after another owner died) restores the
 * stored snapshot, whose deadline timers resume with the remaining time.
 */
export class DeliveryHost {
  private readonly actors = new Map<string, Managed>()
  private readonly activity = new Activity()
  private readonly machine
  private readonly settings: DeliverySettings
  private accepting = true
  private ticking: Promise<void> | null = null
  private nextPass: Promise<void> | null = null
  private readonly dangling: DanglingRefs
  private renewing: Promise<void> | null = null
  private readonly leases: DeliveryLeases
  private readonly stopMetrics: () => void
  private readonly limit: ReturnType<typeof deliveryStepLimit>
  private readonly delivery: ReturnType<typeof createDeliveryActors>
  /** Actors whose take was started ahead of their step and who are not told yet (`noteBuffered`). */
  private readonly takingAhead = new Set<Managed>()

  constructor(
    private readonly services: WebhookEnginePorts,
    private readonly runtime: WebhookRuntime,
    private readonly options: HostOptions,
  ) {
    this.limit = deliveryStepLimit(services.requests)
    this.stopMetrics = onMetricsCollect(() =>
      reportActorMetrics(
        [...this.actors.values()].map((managed) => ({
          value: managed.actor.getSnapshot().value,
          context: { bufferedEvents: managed.feed.buffered() },
        })),
      ),
    )
    this.leases = new DeliveryLeases({
      owner: options.owner,
      leaseTtlMs: options.leaseTtlMs,
      attemptTimeoutMs: runtime.settings.attemptTimeoutMs,
      lease: (ref) => {
        const { ns, id } = parseWebhookRef(ref)
        return services.leases.webhook(ns, id)
      },
      ...(options.leaseClock ? { now: options.leaseClock } : {}),
    })
    const { retryScheduleMs, quarantineMs, rate } = runtime.settings
    this.settings = { retryScheduleMs, quarantineMs, rate, backlogNoticeThreshold: 1000 }
    this.delivery = createDeliveryActors({
      runtime,
      clock: options.clock,
      feedOf: (ref) => this.actors.get(ref)?.feed ?? null,
      accepting: () => this.accepting,
      track: (work) => this.activity.track(work),
      limit: this.limit,
      leases: this.leases,
      leaseLost: (ref) => this.retire(ref, 'lease lapsed: not renewed in time'),
      cursorStale: (ref) => {
        this.retire(ref, 'cursor changed elsewhere: adopted again from storage')
        // Handed back (if still ours) so the next pass, here or elsewhere, adopts it at once.
        void this.leases.release(ref).catch(() => undefined)
      },
    })
    this.machine = webhookDeliveryMachine.provide({ actors: this.delivery.actors })
    this.dangling = new DanglingRefs(
      () => options.clock.now(),
      (ref) => runtime.webhooks.dropDanglingRef(ref),
    )
  }

  /** Webhooks whose actor runs here. */
  owned(): string[] {
    return [...this.actors.keys()]
  }

  /** The live snapshot of an owned actor (tests, dashboard). */
  snapshot(ref: string) {
    return this.actors.get(ref)?.actor.getSnapshot()
  }

  /** Waits until no attempt, storage write or signal handling is running. */
  idle(): Promise<void> {
    return this.activity.idle()
  }

  /** One pass of lease renewal, adoption of free webhooks and reconciliation with storage. */
  tick(): Promise<void> {
    // Renewal runs on its own, never queued behind the record lane or a slow adoption: a lease
    // that lapsed while its owner waited for a slot would be taken over by another process.
    this.renewing ??= this.renew()
      .catch((error) => logger.error('webhook lease renewal failed', { error: String(error) }))
      .finally(() => (this.renewing = null))
    return Promise.all([this.renewing, this.schedulePass()]).then(() => undefined)
  }

  /**
   * Starts a pass, or, when one is running, queues one more after it (at most one): the running
   * pass may have read the webhooks before the creation a signal tells of, and a caller joining it
   * would wait for a pass that never sees that webhook (it waited for the next timed pass).
   */
  private schedulePass(): Promise<void> {
    if (!this.ticking) {
      // As one step of the record lane: a pass (a lease and a document read per webhook) waits
      // for the sends and takes of a burst instead of slowing them.
      this.ticking = this.activity
        .track(this.limit.run(() => this.pass(), 'record'))
        .catch((error) => logger.error('webhook host pass failed', { error: String(error) }))
        .finally(() => (this.ticking = null))
      return this.ticking
    }
    this.nextPass ??= this.ticking.then(() => {
      this.nextPass = null
      return this.schedulePass()
    })
    return this.nextPass
  }

  /** Renews the lease of every actor here; an actor whose lease is gone (or lapsed) stops here. */
  private async renew(): Promise<void> {
    if (!this.accepting) return
    await Promise.all(
      this.owned().map(async (ref) => {
        // A storage error leaves the actor be: its lease lapses here if renewals keep failing.
        const held = await this.leases.renew(ref).catch(() => true)
        if (!held) this.retire(ref, 'lease lost to another process, or lapsed')
      }),
    )
  }

  private leaseNow(): number {
    return this.options.leaseClock?.() ?? Date.now()
  }

  private async pass(): Promise<void> {
    if (!this.accepting) return
    const [hosts, all] = await Promise.all([
      // The leases' clock: a host counts as long as a lease it renewed at the same moment would.
      this.runtime.webhooks.hosts.heartbeat(this.options.owner, this.options.leaseTtlMs, this.leaseNow()),
      this.runtime.webhooks.allRefs(),
    ])
    const share = fairShare(all.length, hosts)
    this.dangling.listed(all)
    await this.adopt(await this.acquireUpTo(share, all))
    await this.reconcile(this.owned())
    if (this.actors.size > share) await this.handOver(this.actors.size - share)
  }

  /**
   * Takes free leases until this process holds `share` webhooks (in a random order, so processes
   * adopting at once take different ones): the first process to start, or to hear of a creation,
   * took every free webhook, and at light load its peer then idled while it did all 100 deliveries
   * of each event one after the other.
   */
  private async acquireUpTo(share: number, all: string[]): Promise<string[]> {
    const free = shuffled(all.filter((ref) => !this.actors.has(ref)))
    const acquired: string[] = []
    while (free.length > 0 && this.actors.size + acquired.length < share) {
      const round = free.splice(0, share - this.actors.size - acquired.length)
      const held = await Promise.all(round.map(async (ref) => ((await this.leases.acquire(ref)) ? ref : null)))
      acquired.push(...held.filter((ref): ref is string => ref !== null))
    }
    return acquired
  }

  /**
   * Hands `count` webhooks back to the other processes (more joined since this one adopted its
   * webhooks): only actors at rest with nothing buffered, each stored and released as at a graceful
   * stop, then announced so the others adopt them at once. Actors busy now wait for a later pass.
   */
  private async handOver(count: number): Promise<void> {
    const resting = [...this.actors.values()].filter((managed) => {
      const { value, context } = managed.actor.getSnapshot()
      return !managed.retired && value === 'active' && context.batch === null && managed.feed.buffered() === 0
    })
    const leaving = resting.slice(0, count)
    if (leaving.length === 0) return
    await Promise.all(
      leaving.map(async (managed) => {
        managed.retired = true
        managed.unsubscribe()
        this.actors.delete(managed.ref)
        this.services.live.forget('webhook', managed.ref)
        try {
          await managed.snapshots.final()
        } finally {
          managed.actor.stop()
          managed.feed.stop()
        }
        // A write of its feed still on its way is fenced by the cursor: the adopter's next write
        // then finds the cursor changed and adopts it again from storage (stale-cursor.test.ts).
        await this.leases.release(managed.ref)
      }),
    )
    logger.info('webhook delivery actors handed over', { owner: this.options.owner, count: leaving.length })
    await this.runtime.signals.publish({ kind: 'changed', refs: leaving.map((managed) => managed.ref) })
  }

  /**
   * Restores (or creates) the actors of webhooks whose lease this process just took, each after its
   * feed caught up. Only a webhook whose document is stored gets one: the global index names a
   * webhook before its creation commits (storage/repositories/webhooks.ts), and its cursor is
   * written with the document. An actor adopted in between loaded no cursor, found the one the
   * creation stored at its first take, and failed every take after as "changed elsewhere" while
   * renewing its lease: the webhook stalled for good. The document is read before the cursor, so
   * a document found means its cursor is found too.
   */
  private async adopt(refs: string[]): Promise<void> {
    if (refs.length === 0) return
    const [snapshots, docs] = await Promise.all([
      this.runtime.webhooks.loadSnapshots(refs),
      this.runtime.webhooks.getMany(refs),
    ])
    await Promise.all(
      refs.map(async (ref, index) => {
        const doc = docs[index]
        // Not created yet (or deleted): the lease goes back at once (should that fail, it lapses);
        // the creation's signal or a later pass adopts the webhook once it is stored.
        if (!doc) {
          const dropping = this.dangling.missing(ref)
          if (dropping) void this.activity.track(dropping)
          return this.leases.release(ref).catch(() => undefined)
        }
        this.dangling.found(ref)
        const feed = this.feed(ref, doc)
        await feed.start()
        this.start(ref, snapshots[index] as Snapshot<unknown> | null, feed)
        // Before its first attempt, the actor learns what its document says (its own settings too).
        this.syncDocument(ref, doc)
      }),
    )
  }

  private feed(ref: string, doc: WebhookRecord | null): WebhookFeed {
    const { ns, id } = parseWebhookRef(ref)
    return new WebhookFeed(ns, id, doc, {
      events: this.services.events,
      cursors: this.runtime.webhooks.cursors,
      follower: this.options.follower,
      clock: this.options.clock,
      cap: this.runtime.settings.bufferSize,
      track: (work) => this.activity.track(work),
      redeliveries: new RedeliveryQueue(this.runtime.records, ns, id),
      changed: () => this.noteBuffered(ref),
      dropped: (events) =>
        void this.activity
          .track(this.runtime.records.addMetrics(ns, id, this.options.clock.now(), { eventsDropped: events }))
          .catch(() => undefined),
    })
  }

  /**
   * Tells the actor its buffered count when it differs from what it knows. Only an idle (or
   * disabled) actor acts on the count; a busy one refreshes it with each take and attempt, and
   * is told again when it comes to rest (the subscription below). A busy actor's new count goes
   * to the live view alone: an actor step per webhook for each read of the log cost a tenth of
   * the process's CPU under a full fan-out. An idle actor that the count sends straight to a take
   * has the take made first and is told once it is made (`takeAhead` in adapter.ts).
   */
  private noteBuffered(ref: string): void {
    const managed = this.actors.get(ref)
    if (!managed || managed.retired || this.takingAhead.has(managed)) return
    const bufferedEvents = managed.feed.buffered()
    const snapshot = managed.actor.getSnapshot()
    if (bufferedEvents === snapshot.context.bufferedEvents) return
    if (snapshot.value === 'active' || snapshot.value === 'disabled') {
      const now = this.options.clock.now()
      const take = this.accepting ? takeOnBuffered(snapshot.value, snapshot.context, bufferedEvents, now) : null
      if (!take) return managed.actor.send({ type: 'EVENTS_BUFFERED', bufferedEvents, now })
      this.takingAhead.add(managed)
      this.delivery.takeAhead(take, () => {
        this.takingAhead.delete(managed)
        if (managed.retired) return
        // The count as it is now: the take and events that came meanwhile are in it.
        managed.actor.send({
          type: 'EVENTS_BUFFERED',
          bufferedEvents: managed.feed.buffered(),
          now: Math.max(now, this.options.clock.now()),
        })
      })
    } else
      this.services.live.publish('webhook', ref, {
        value: snapshot.value,
        context: { ...snapshot.context, bufferedEvents },
      })
  }

  private start(ref: string, stored: Snapshot<unknown> | null, feed: WebhookFeed): void {
    if (this.actors.has(ref) || !this.accepting) return feed.stop()
    // Adopted a while ago (the feed caught up meanwhile): only with the lease still surely ours.
    if (!this.leases.holds(ref)) return feed.stop()
    const { ns, id } = parseWebhookRef(ref)
    const managed = startManagedActor(ref, stored, feed, {
      machine: this.machine,
      settings: this.settings,
      now: () => this.options.clock.now(),
      // In the record lane: when one event reaches many webhooks, sends go out first.
      saveSnapshot: (snapshot) => this.limit.run(() => this.runtime.webhooks.saveSnapshot(ns, id, snapshot), 'record'),
      track: (work) => this.activity.track(work),
      atRest: () => this.noteBuffered(ref),
      emitted: (emitted) => handleEmitted(this.services, this.runtime, emitted),
      live: this.services.live,
    })
    this.actors.set(ref, managed)
    managed.actor.start()
    managed.snapshots.note()
    // A restored snapshot's count is old; the feed's is current.
    this.noteBuffered(ref)
  }

  /** Stops an actor here without storing it (deleted webhook, or another process owns it now). */
  private retire(ref: string, reason: string): void {
    const managed = this.actors.get(ref)
    if (!managed) return
    managed.retired = true
    managed.snapshots.stop()
    managed.unsubscribe()
    managed.actor.stop()
    managed.feed.stop()
    this.actors.delete(ref)
    this.delivery.forget(ref)
    this.leases.forget(ref)
    this.services.live.forget('webhook', ref)
    logger.info('webhook delivery actor retired', { webhook: ref, reason })
  }

  /** Brings actors in line with storage: subscriptions, releases, deletions, buffered counts. */
  private async reconcile(refs: string[]): Promise<void> {
    const docs = await this.runtime.webhooks.getMany(refs)
    refs.forEach((ref, index) => {
      const managed = this.actors.get(ref)
      if (!managed) return
      const doc = docs[index]
      if (doc === null) return this.retireDeleted(ref)
      managed.feed.setWebhook(doc)
      this.syncDocument(ref, doc)
      this.noteBuffered(ref)
      // A resend or recover signals a change too; the queue it wrote counts as buffered.
      void this.activity
        .track(managed.feed.reloadRedeliveries().then(() => this.noteBuffered(ref)))
        .catch(() => undefined)
    })
  }

  /** The one channel from a webhook document to its actor: release, enable, disable, its own settings. */
  private syncDocument(ref: string, doc: WebhookRecord): void {
    const managed = this.actors.get(ref)
    if (!managed || managed.retired) return
    for (const change of documentChanges(doc, managed.actor.getSnapshot(), this.options.clock.now()))
      managed.actor.send(change)
  }

  private retireDeleted(ref: string): void {
    this.retire(ref, 'webhook deleted')
    const { ns, id } = parseWebhookRef(ref)
    void this.activity.track(
      // The cursor too: a write racing the deletion may have stored it again.
      Promise.all([
        this.runtime.webhooks.cursors.delete(ns, id),
        this.runtime.webhooks.deleteSnapshot(ns, id),
        this.leases.release(ref),
      ]),
    )
  }

  /** Reacts to a signal from the API (any process). */
  onSignal(signal: WebhookSignal): void {
    if (!this.accepting) return
    const mine = signal.refs.filter((ref) => this.actors.has(ref))
    if (signal.kind === 'deleted') {
      mine.forEach((ref) => this.retireDeleted(ref))
    } else {
      // A new or changed webhook: adopt it now instead of at the next pass.
      if (mine.length < signal.refs.length) void this.tick()
      if (mine.length) void this.activity.track(this.reconcile(mine))
    }
  }

  /**
   * Graceful stop: no new batch is taken or sent, an attempt in flight finishes (bounded by the
   * attempt timeout), every actor is stored, and leases are released for a quick takeover.
   */
  async stop(): Promise<void> {
    this.accepting = false
    this.stopMetrics()
    this.limit.close()
    // The others count without this process at once (their next pass adopts its webhooks).
    const leaving = this.runtime.webhooks.hosts.leave(this.options.owner).catch(() => undefined)
    const bound = this.runtime.settings.attemptTimeoutMs + 2_000
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.activity.idle(), new Promise((resolve) => (timer = setTimeout(resolve, bound)))])
    clearTimeout(timer)
    await Promise.all(
      [...this.actors.values()].map(async (managed) => {
        managed.retired = true
        managed.unsubscribe()
        await managed.snapshots.final()
        managed.actor.stop()
        managed.feed.stop()
        await this.leases.release(managed.ref)
      }),
    )
    this.actors.clear()
    await leaving
  }
}

/** Webhooks per process when `hosts` share `webhooks` evenly (the last ones may hold one fewer). */
function fairShare(webhooks: number, hosts: number): number {
  return Math.ceil(webhooks / Math.max(1, hosts))
}

/** A copy of `refs` in a random order (Fisher-Yates). */
function shuffled(refs: string[]): string[] {
  const copy = [...refs]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j], copy[i]]
  }
  return copy
}
