import type { Actor } from 'xstate'
import type { webhookDeliveryMachine } from '../../../machines/webhook-delivery.machine'
import type { DeliveryContext } from '../../../machines/webhook-delivery/types'
import { logger } from '../../app/logger'
import { stateName } from './actor-effects'

type DeliveryActor = Actor<typeof webhookDeliveryMachine>
type Persisted = ReturnType<DeliveryActor['getPersistedSnapshot']>
type Seen = { value: unknown; context: DeliveryContext }

/** States an actor only passes through: choosing what to do next, taking a batch, sending it. */
const isPassing = (value: unknown) =>
  value === 'dispatching' || (typeof value === 'object' && value !== null && 'delivering' in value)

/** Resting states a webhook delivering steadily goes between, several times a second. */
const isFlowing = (value: unknown) => value === 'active' || value === 'pacing'

/**
 * Context a restore can do without from the very last attempt: the pacing window (an adopting
 * process takes over a lease time after the last renewal, 10 s by default, when the window of a
 * whole rate is 1 s), the last outcome, and what the feed recounts on adoption.
 */
const PACING_ONLY = new Set(['bufferedEvents', 'now', 'recentStarts', 'lastOutcome', 'pacedUntil'])

/** How long a pacing-only change may wait before it is stored (a later one replaces it meanwhile). */
export const PACING_WRITE_DELAY_MS = 1_000

/**
 * Whether a transition changed anything a restore needs: `now`, `later` (only the pacing window,
 * between flowing states: stored within PACING_WRITE_DELAY_MS, one write for the attempts of
 * that time instead of one each) or `never`. A new buffered count alone is never stored (the
 * feed recounts on adoption): storing every one would cost a snapshot write per webhook for each append.
 */
function worthStoring(previous: Seen | null, next: Seen): 'now' | 'later' | 'never' {
  // Taking and sending are redone from the last resting state: the stored cursor holds the batch
  // in flight (same delivery id), and every outcome leads to a resting state that is stored.
  if (isPassing(next.value)) return 'never'
  if (!previous) return 'now'
  const before = previous.context as unknown as Record<string, unknown>
  const after = next.context as unknown as Record<string, unknown>
  const changed = Object.keys(after).filter(
    (key) => key !== 'bufferedEvents' && key !== 'now' && after[key] !== before[key],
  )
  const sameState = stateName(previous.value) === stateName(next.value)
  if (sameState && changed.length === 0) return 'never'
  if (isFlowing(previous.value) && isFlowing(next.value) && changed.every((key) => PACING_ONLY.has(key))) return 'later'
  return 'now'
}

/**
 * Coalescing write-behind of one delivery actor's snapshot: one write at a time, and a write
 * always stores the latest snapshot, so a burst of transitions costs at most two writes.
 */
export class SnapshotWriter {
  private writing: Promise<void> | null = null
  private dirty = false
  private stopped = false
  /** The snapshot last handed to storage (what it holds, or is about to). */
  private persisted: Seen | null = null
  /** A pacing-only change waiting to be stored. */
  private deferred: NodeJS.Timeout | null = null
  /** Its time came while the actor was passing through: stored at the next resting state. */
  private due = false

  constructor(
    private readonly ref: string,
    private readonly actor: DeliveryActor,
    private readonly save: (snapshot: Persisted) => Promise<void>,
    /** Registers running work so shutdown and tests can wait for it. */
    private readonly track: <T>(work: Promise<T>) => Promise<T>,
  ) {}

  /** After a transition: stores the actor's snapshot when a restore needs what changed. */
  note(): void {
    const current = this.actor.getSnapshot()
    if (this.stopped || isPassing(current.value)) return
    const when = this.due ? 'now' : worthStoring(this.persisted, current)
    if (when === 'never') return
    if (when === 'later') {
      this.deferred ??= setTimeout(() => {
        this.deferred = null
        this.due = true
        this.note()
      }, PACING_WRITE_DELAY_MS)
      return
    }
    this.store(current)
  }

  private store(current: Seen): void {
    if (this.deferred) clearTimeout(this.deferred)
    this.deferred = null
    this.due = false
    if (this.stopped) return
    this.persisted = { value: current.value, context: current.context }
    this.dirty = true
    if (this.writing) return
    this.writing = this.track(
      (async () => {
        while (this.dirty && !this.stopped) {
          this.dirty = false
          const snapshot = this.actor.getPersistedSnapshot()
          if (snapshot.status === 'active') await this.save(snapshot)
        }
      })()
        .catch((error) => logger.error('webhook snapshot write failed', { webhook: this.ref, error: String(error) }))
        .finally(() => {
          this.writing = null
          // A transition that arrived after the loop's last check but before this line.
          if (this.dirty) this.store(this.persisted!)
        }),
    )
  }

  /** No more writes (the actor is retired here, or about to be stored a last time by `final`). */
  stop(): void {
    this.stopped = true
    if (this.deferred) clearTimeout(this.deferred)
    this.deferred = null
  }

  /** Stops, waits for a write still running (it must not land after this one), stores the snapshot. */
  async final(): Promise<void> {
    this.stop()
    if (this.writing) await this.writing
    const snapshot = this.actor.getPersistedSnapshot()
    if (snapshot.status === 'active') await this.save(snapshot)
  }
}
