import { AsyncResource } from 'node:async_hooks'
import { EventEmitter } from 'node:events'
import type { ChangeAnnouncement, SignalBus, WebhookSignals } from '../ports'

/** Signals of one process: in-process emitters. */
export class LocalSignals implements SignalBus {
  private readonly emitter = new EventEmitter()
  readonly webhooks: WebhookSignals

  constructor() {
    this.emitter.setMaxListeners(0)
    const webhookEmitter = new EventEmitter()
    webhookEmitter.setMaxListeners(0)
    this.webhooks = {
      async publish(signal) {
        webhookEmitter.emit('signal', signal)
      },
      subscribe(listener) {
        webhookEmitter.on('signal', listener)
        return () => webhookEmitter.off('signal', listener)
      },
      async close() {
        webhookEmitter.removeAllListeners()
      },
    }
  }

  /** Told by the key-value port after a transaction appended events to `ns`'s log. */
  eventsAppended(ns: string): void {
    this.emitter.emit('events', ns)
  }

  /** Told by the key-value port after a transaction announced a change (`TxWrites.announce`). */
  changed(change: ChangeAnnouncement): void {
    this.emitter.emit('changes', change)
  }

  onEvents(listener: (ns: string) => void): () => void {
    return this.listen('events', listener)
  }

  onChanges(listener: (change: ChangeAnnouncement) => void): () => void {
    return this.listen('changes', listener)
  }

  private listen<T>(kind: 'events' | 'changes', listener: (value: T) => void): () => void {
    // Bound to the registering context: the appender's request context must not leak into the
    // background work the listener starts (as on Redis, where the wake-up comes from pub/sub).
    const bound = AsyncResource.bind(listener)
    this.emitter.on(kind, bound)
    return () => this.emitter.off(kind, bound)
  }

  async eventsReady(): Promise<void> {}

  /** In one process nothing is ever missed. */
  eventsLive(): boolean {
    return true
  }

  onEventsMissed(): () => void {
    return () => undefined
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners()
    await this.webhooks.close()
  }
}
