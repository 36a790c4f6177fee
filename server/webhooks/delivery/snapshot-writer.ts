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

/**
 * Whether a transition changed anything a restore needs. A new buffered count alone does not
 * (the feed recounts on adoption): storing every one would cost a snapshot write per webhook for
 * each append.
 */
function worthStoring(previous: Seen | null, next: Seen): boolean {
  // Taking and sending are redone from the last resting state: the stored cursor holds the batch
  // in flight (same delivery id), and every outcome leads to a resting state that is stored.
  if (isPassing(next.value)) return false
  if (!previous || stateName(previous.value) !== stateName(next.value)) return true
  const before = previous.context as unknown as Record<string, unknown>
  const after = next.context as unknown as Record<string, unknown>
  return Object.keys(after).some((key) => key !== 'bufferedEvents' && key !== 'now' && after[key] !== before[key])
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
    if (!worthStoring(this.persisted, current)) return
    this.persisted = { value: current.value, context: current.context }
    this.dirty = true
    if (this.writing || this.stopped) return
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
          if (this.dirty) this.note()
        }),
    )
  }

  /** No more writes (the actor is retired here, or about to be stored a last time by `final`). */
  stop(): void {
    this.stopped = true
  }

  /** Stops, waits for a write still running (it must not land after this one), stores the snapshot. */
  async final(): Promise<void> {
    this.stop()
    if (this.writing) await this.writing
    const snapshot = this.actor.getPersistedSnapshot()
    if (snapshot.status === 'active') await this.save(snapshot)
  }
}
