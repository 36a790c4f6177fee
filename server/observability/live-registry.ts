import { createStore } from '@xstate/store'

/**
 * The per-process registry of live actor states the dashboard streams to browsers. Actor hosts
 * publish every transition here; the SSE route subscribes. Only this process's actors appear,
 * so the stream also polls the persisted state (see live-source.ts) for actors running elsewhere.
 * One instance per process, built by the composition root (`Services.live`): the publishers
 * (webhook delivery, exception requests) see `LivePublisher`, the dashboard the whole registry.
 *
 * Ids: a webhook is `liveId.webhook(ns, id)` (= the delivery host's `ref`, `ns/id`); an
 * exception request is `liveId.exceptionRequest(ns, fw, id)` (`ns/fw/id`).
 */

export type LiveKind = 'webhook' | 'exception-request'

/** What a publisher hands over: the snapshot's `value` and (optionally) its `context`. */
interface LiveSnapshot {
  value: unknown
  context?: unknown
}

export interface LiveState extends LiveSnapshot {
  /** When it was published (ms since epoch). */
  at: number
}

export const liveId = {
  webhook: (ns: string, id: string) => `${ns}/${id}`,
  exceptionRequest: (ns: string, fw: string, id: string) => `${ns}/${fw}/${id}`,
}

const keyOf = (kind: LiveKind, id: string) => `${kind}:${id}`

/**
 * Exception requests are published on every change and never forgotten (no host stops them), so
 * their states are bounded (#30): past this many, the least recently published goes. A page
 * showing one that went falls back to the persisted state (live-source.ts), as for an actor of
 * another process. Webhook states are bounded by the actors this process hosts (each forgotten
 * when its actor stops here).
 */
export const LIVE_EXCEPTION_REQUESTS = 1_000

/**
 * The states sit in one Map changed in place: a host publishes every transition of every actor
 * it runs, and copying the whole registry on each (an object spread) cost O(actors) per
 * transition. Each change still gives the store a new context, so subscribers hear of it.
 */
type Published = { key: string; state: LiveState; kind: LiveKind }

/** What actor hosts use: publish a state, forget an actor that stopped here. */
export type LivePublisher = Pick<LiveRegistry, 'publish' | 'forget'>

export class LiveRegistry {
  /** Keys of the exception-request states held, least recently published first. */
  private readonly exceptionOrder = new Set<string>()
  /** Live subscriptions open (`subscribe`). */
  private listeners = 0
  private readonly store = createStore({
    context: { actors: new Map<string, LiveState>() },
    on: {
      published: (context, event: Published) => {
        this.record(context.actors, event)
        return { actors: context.actors }
      },
      forgotten: (context, event: { key: string }) => {
        context.actors.delete(event.key)
        this.exceptionOrder.delete(event.key)
        return { actors: context.actors }
      },
    },
  })

  /**
   * Records the current state of a live actor. Cheap and synchronous; call it from an actor's
   * `subscribe` callback. Never throws.
   * @example actor.subscribe((s) => live.publish('webhook', ref, { value: s.value, context: s.context }))
   */
  publish(kind: LiveKind, id: string, state: LiveSnapshot): void {
    try {
      const event: Published = {
        kind,
        key: keyOf(kind, id),
        state: { value: state.value, context: state.context, at: Date.now() },
      }
      // With no live stream open, nobody is told: the state goes straight into the map the store
      // holds. Through the store it cost about a third of handing an event to a webhook's buffer
      // (a busy actor publishes its new count on every append).
      if (this.listeners === 0) this.record(this.store.getSnapshot().context.actors, event)
      else this.store.trigger.published(event)
    } catch {
      // A dashboard problem must never disturb an actor host.
    }
  }

  /** Drops an actor that stopped running here (deleted, or moved to another process). */
  forget(kind: LiveKind, id: string): void {
    this.store.trigger.forgotten({ key: keyOf(kind, id) })
  }

  /** The last published state, if an actor of this process published one. */
  latest(kind: LiveKind, id: string): LiveState | undefined {
    return this.store.getSnapshot().context.actors.get(keyOf(kind, id))
  }

  /** Calls `listener` with each newly published state of one actor; returns the unsubscribe. */
  subscribe(kind: LiveKind, id: string, listener: (state: LiveState) => void): () => void {
    const key = keyOf(kind, id)
    let last = this.latest(kind, id)
    const subscription = this.store.subscribe((snapshot) => {
      const state = snapshot.context.actors.get(key)
      if (state && state !== last) {
        last = state
        listener(state)
      }
    })
    this.listeners++
    let open = true
    return () => {
      if (open) this.listeners--
      open = false
      subscription.unsubscribe()
    }
  }

  /** How many states of `kind` this process holds (bounded: see LIVE_EXCEPTION_REQUESTS). */
  count(kind: LiveKind): number {
    const prefix = keyOf(kind, '')
    let count = 0
    for (const key of this.store.getSnapshot().context.actors.keys()) if (key.startsWith(prefix)) count++
    return count
  }

  /** Puts a published state in the map (in place), keeping the exception requests' bound. */
  private record(actors: Map<string, LiveState>, event: Published): void {
    actors.set(event.key, event.state)
    if (event.kind === 'exception-request') {
      this.exceptionOrder.delete(event.key)
      this.exceptionOrder.add(event.key)
      for (const oldest of this.exceptionOrder) {
        if (this.exceptionOrder.size <= LIVE_EXCEPTION_REQUESTS) break
        this.exceptionOrder.delete(oldest)
        actors.delete(oldest)
      }
    }
  }
}
