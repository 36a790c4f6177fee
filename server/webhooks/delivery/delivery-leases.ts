import { performance } from 'node:perf_hooks'
import type { Lease } from '../../../storage/repositories/leases'

export interface DeliveryLeaseOptions {
  /** Lease owner id of this process. */
  owner: string
  /** Lease time while no attempt is in flight (`WEBHOOK_LEASE`). */
  leaseTtlMs: number
  /** The longest an attempt's request stays open (`WEBHOOK_ATTEMPT_TIMEOUT`). */
  attemptTimeoutMs: number
  /** A webhook's lease in storage. */
  lease: (ref: string) => Lease
  /** Monotonic milliseconds; `performance.now` by default (tests inject their own). */
  now?: () => number
}

/** What this process knows of one lease it holds. */
interface Held {
  /** Until when the lease is surely ours: sent time of the last renewal storage applied, plus its ttl. */
  validUntil: number
  /** While an attempt is in flight: when its request is closed at the latest. */
  attemptUntil: number | null
  /** Renewals are applied by storage in the order they were sent; only the latest sent sets `validUntil`. */
  sent: number
  applied: number
  /** The lease in storage (made once: a delivery extends and ends it around every attempt). */
  lease: Lease
}

/**
 * The delivery leases of one process, one per webhook it delivers, kept so that a webhook never
 * has two requests in flight, even when its owner stalls (CPU starvation, a long GC, SIGSTOP):
 * - before each attempt the owner checks that it still holds the lease and extends it to the
 *   attempt's timeout plus one lease time (`beginAttempt`); the request is cut at that timeout,
 *   so another process can take the webhook over only after the request has ended, with one
 *   lease time to spare for an owner that stalls around its timeout;
 * - renewals during an attempt never shorten that; after it, renewals return to the lease time;
 * - each process judges on its own clock whether a lease is still surely its own, from the time it
 *   *sent* the renewal storage applied last; a lapsed lease is lost (the actor is retired and adopted
 *   again from storage, here or elsewhere), never silently taken back.
 * A process killed during an attempt is thus replaced after `attemptTimeoutMs + leaseTtlMs` at most;
 * one killed between attempts within `leaseTtlMs` (plus a renewal interval).
 */
export class DeliveryLeases {
  private readonly held = new Map<string, Held>()
  private readonly now: () => number

  constructor(private readonly options: DeliveryLeaseOptions) {
    this.now = options.now ?? (() => performance.now())
  }

  /** Takes a free lease (or renews one held here); false when another process holds it. Storage errors reject. */
  async acquire(ref: string): Promise<boolean> {
    return this.held.has(ref) ? this.renew(ref) : this.apply(ref, null, this.now(), this.options.leaseTtlMs)
  }

  /**
   * Renews a lease held here (an actor running here); false when it is lost: another process
   * holds it, or it lapsed here, or it was never taken. Storage errors reject.
   */
  async renew(ref: string): Promise<boolean> {
    const entry = this.held.get(ref)
    if (!entry) return false
    const sentAt = this.now()
    // A lease that lapsed here is not taken back by a renewal: it is lost (see the class note).
    if (sentAt >= entry.validUntil) {
      this.held.delete(ref)
      return false
    }
    return this.apply(ref, entry, sentAt, this.ttlAt(entry, sentAt))
  }

  /** Whether the lease of `ref` is surely this process's now (no storage call). */
  holds(ref: string): boolean {
    const entry = this.held.get(ref)
    return entry !== undefined && this.now() < entry.validUntil
  }

  /**
   * Right before an attempt's request: checks the lease is still held here and extends it to
   * cover the attempt. Returns the milliseconds the request may stay open (cut there), or null
   * when the lease is lost and nothing may be sent.
   */
  async beginAttempt(ref: string): Promise<number | null> {
    const entry = this.held.get(ref)
    const sentAt = this.now()
    if (!entry || sentAt >= entry.validUntil) {
      this.held.delete(ref)
      return null
    }
    const { attemptTimeoutMs, leaseTtlMs } = this.options
    entry.attemptUntil = sentAt + attemptTimeoutMs
    let extended: boolean
    try {
      extended = await this.apply(ref, entry, sentAt, attemptTimeoutMs + leaseTtlMs)
    } catch (error) {
      // Not sent: the attempt fails as any storage failure before a send does.
      entry.attemptUntil = null
      throw error
    }
    if (!extended) return null
    const left = entry.attemptUntil - this.now()
    return left > 0 ? left : null
  }

  /**
   * The milliseconds a request may still stay open under the extension `beginAttempt` made, when
   * that extension was sent at most `withinMs` ago (it ends `attemptTimeoutMs` after it was
   * sent); null when there is none that recent, or the lease is no longer surely held here. An
   * extension sent ahead of the request (with the take of its batch) is used only this way, so
   * the request is still cut where the extension ends and its timeout shrinks by `withinMs` at most.
   */
  attemptLeft(ref: string, withinMs: number): number | null {
    const entry = this.held.get(ref)
    const now = this.now()
    if (!entry || entry.attemptUntil === null || now >= entry.validUntil) return null
    const left = entry.attemptUntil - now
    return left > 0 && left >= this.options.attemptTimeoutMs - withinMs ? left : null
  }

  /**
   * The attempt's request ended: the lease goes back to its normal time at once, so that a
   * process killed now is replaced within one lease time. Never rejects (the next renewal retries).
   */
  async endAttempt(ref: string): Promise<void> {
    const entry = this.held.get(ref)
    if (!entry) return
    entry.attemptUntil = null
    const sentAt = this.now()
    if (sentAt >= entry.validUntil) return
    await this.apply(ref, entry, sentAt, this.options.leaseTtlMs).catch(() => undefined)
  }

  /** Forgets a lease without releasing it (another process holds it, or it lapsed). */
  forget(ref: string): void {
    this.held.delete(ref)
  }

  /** Hands a lease back at once (graceful stop, deleted webhook). */
  async release(ref: string): Promise<void> {
    this.held.delete(ref)
    await this.options.lease(ref).release(this.options.owner)
  }

  /** Ttl for a renewal sent at `at`: the lease time, or what an attempt in flight still needs. */
  private ttlAt(entry: Held, at: number): number {
    const { leaseTtlMs } = this.options
    if (!entry.attemptUntil) return leaseTtlMs
    return Math.max(leaseTtlMs, Math.ceil(entry.attemptUntil + leaseTtlMs - at))
  }

  private async apply(ref: string, known: Held | null, sentAt: number, ttl: number): Promise<boolean> {
    const entry = known ?? {
      validUntil: -Infinity,
      attemptUntil: null,
      sent: 0,
      applied: 0,
      lease: this.options.lease(ref),
    }
    const seq = ++entry.sent
    const ok = await entry.lease.acquire(this.options.owner, ttl)
    if (!ok) {
      if (this.held.get(ref) === entry) this.held.delete(ref)
      return false
    }
    // A renewal sent later (and so applied later by storage) may have come back first.
    if (seq > entry.applied) {
      entry.applied = seq
      entry.validUntil = sentAt + ttl
    }
    if (!known && !this.held.has(ref)) this.held.set(ref, entry)
    return true
  }
}
