import { createActor, type Actor, type Snapshot } from 'xstate'
import type { webhookDeliveryMachine } from '../../../machines/webhook-delivery.machine'
import type { DeliveryContext, DeliveryEmitted, DeliverySettings } from '../../../machines/webhook-delivery/types'
import { logger } from '../../app/logger'
import type { LivePublisher } from '../../observability/live-registry'
import { stateName } from './actor-effects'
import { SnapshotWriter } from './snapshot-writer'
import type { WebhookFeed } from './webhook-feed'

type DeliveryMachine = typeof webhookDeliveryMachine
export type DeliveryActor = Actor<DeliveryMachine>

/** One webhook's running delivery actor in this process, with its feed and snapshot writer. */
export interface Managed {
  ref: string
  actor: DeliveryActor
  feed: WebhookFeed
  unsubscribe: () => void
  snapshots: SnapshotWriter
  retired: boolean
}

interface ActorEdges {
  /** The machine with its actors provided (adapter.ts). */
  machine: DeliveryMachine
  settings: DeliverySettings
  now: () => number
  /** Stores a snapshot (in the host's record lane). */
  saveSnapshot: (snapshot: unknown) => Promise<void>
  track: <T>(work: Promise<T>) => Promise<T>
  /** The actor came to rest (active or disabled): the host tells it what was buffered meanwhile. */
  atRest: () => void
  /** An emitted event (notices, metrics) for the host's bookkeeping. */
  emitted: (event: DeliveryEmitted) => Promise<void>
  /** The process's live registry: every transition is published for the dashboard. */
  live: LivePublisher
}

/**
 * Creates and starts the delivery actor of `ref`, restored from `stored` when that is a live
 * snapshot (with the settings of this process), and wires it to the live view, its snapshot
 * writer and the host's bookkeeping.
 */
export function startManagedActor(
  ref: string,
  stored: Snapshot<unknown> | null,
  feed: WebhookFeed,
  edges: ActorEdges,
): Managed {
  const restorable = stored && stored.status === 'active'
  // Settings follow the environment of the process running the actor, also for restored ones.
  const snapshot = restorable
    ? {
        ...stored,
        context: { ...(stored as unknown as { context: DeliveryContext }).context, settings: edges.settings },
      }
    : undefined
  const actor = createActor(edges.machine, {
    input: { webhookId: ref, now: edges.now(), settings: edges.settings, bufferedEvents: feed.buffered() },
    ...(snapshot ? { snapshot: snapshot as Snapshot<unknown> } : {}),
  })
  const managed: Managed = {
    ref,
    actor,
    feed,
    unsubscribe: () => undefined,
    snapshots: new SnapshotWriter(ref, actor, edges.saveSnapshot, edges.track),
    retired: false,
  }
  let previous = restorable ? stateName((stored as unknown as { value: unknown }).value) : 'new'
  const subscription = actor.subscribe({
    next: (next) => {
      const current = stateName(next.value)
      if (current !== previous) {
        // debug: under fan-out there are about two per delivery attempt (docs/deploy.md, log levels).
        logger.debug('webhook delivery transition', {
          webhook: ref,
          from: previous,
          to: current,
          buffered: next.context.bufferedEvents,
        })
        previous = current
      }
      edges.live.publish('webhook', ref, { value: next.value, context: next.context })
      managed.snapshots.note()
      // At rest with a count from its last step: events that came meanwhile wake it now.
      if (next.value === 'active' || next.value === 'disabled') edges.atRest()
    },
    error: (error) => logger.error('webhook delivery actor failed', { webhook: ref, error: String(error) }),
  })
  const offEmitted = actor.on('*', (emitted) => {
    void edges
      .track(edges.emitted(emitted as DeliveryEmitted))
      .catch((error) => logger.error('webhook bookkeeping failed', { webhook: ref, error: String(error) }))
  })
  managed.unsubscribe = () => {
    subscription.unsubscribe()
    offEmitted.unsubscribe()
  }
  logger.info(restorable ? 'webhook delivery actor restored' : 'webhook delivery actor created', {
    webhook: ref,
    state: previous,
  })
  return managed
}
