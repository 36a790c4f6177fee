import type { ChangeAnnouncement, ChangeScope, SignalBus, WebhookSignal, WebhookSignals } from '../ports'
import { keys } from '../repositories/keys'
import type { RedisClient, RedisConnection } from './connection'

const SCOPES: ReadonlySet<string> = new Set<ChangeScope>(['firewalls', 'access'])

/** A change announcement as published: `<scope>:<namespace>`. */
export function changeMessage(change: ChangeAnnouncement): string {
  return `${change.scope}:${change.ns}`
}

/** The announcement of a published message; null for one this release does not know. */
function parseChange(message: string): ChangeAnnouncement | null {
  const colon = message.indexOf(':')
  const scope = message.slice(0, colon)
  return colon > 0 && SCOPES.has(scope) ? { scope: scope as ChangeScope, ns: message.slice(colon + 1) } : null
}

/**
 * Signals on Redis pub/sub, across processes. The events wake-up is published by the key-value
 * port's transaction script; webhook signals by `webhooks.publish`. Each kind listens on a
 * dedicated connection (a subscribed ioredis client runs nothing else), opened on first use.
 * The key prefix is part of each channel, so services sharing one Redis under different prefixes stay apart.
 */
export class RedisSignals implements SignalBus {
  private subscriber: RedisClient | null = null
  private subscribed: Promise<void> = Promise.resolve()
  private readonly listeners = new Set<(ns: string) => void>()
  private readonly changeListeners = new Set<(change: ChangeAnnouncement) => void>()
  private readonly missedListeners = new Set<() => void>()
  /** The subscription is confirmed and its connection has not dropped since (see `eventsLive`). */
  private live = false
  readonly webhooks: WebhookSignals

  constructor(private readonly connection: RedisConnection) {
    this.webhooks = webhookSignals(connection)
  }

  onEvents(listener: (ns: string) => void): () => void {
    this.listeners.add(listener)
    this.subscribe()
    return () => this.listeners.delete(listener)
  }

  onChanges(listener: (change: ChangeAnnouncement) => void): () => void {
    this.changeListeners.add(listener)
    this.subscribe()
    return () => this.changeListeners.delete(listener)
  }

  /**
   * Told by the key-value port when a transaction of this process that announces `change`
   * committed: its listeners here hear of it before the caller goes on, not only when the
   * published message comes back (which tells them again).
   */
  changed(change: ChangeAnnouncement): void {
    this.changeListeners.forEach((notify) => notify(change))
  }

  private subscribe(): void {
    if (this.subscriber) return
    const subscriber = this.connection.duplicate()
    const events = this.connection.raw(keys.eventsChannel)
    const changes = this.connection.raw(keys.changesChannel)
    this.subscriber = subscriber
    const confirm = () =>
      subscriber.subscribe(events, changes).then(() => {
        if (this.subscriber !== subscriber) return
        this.live = true
        // Whatever was kept while notifications were not received ends now.
        this.missedListeners.forEach((notify) => notify())
      })
    this.subscribed = confirm()
    // Handled here too: a listener that never asks `eventsReady` (token lookups) must not turn a
    // close before the subscription completed into an unhandled rejection.
    this.subscribed.catch(() => undefined)
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== changes) return this.listeners.forEach((notify) => notify(message))
      const change = parseChange(message)
      // One this release does not know (a later release's scope) ends everything kept: never less than asked.
      if (change) this.changeListeners.forEach((notify) => notify(change))
      else this.missedListeners.forEach((notify) => notify())
    })
    // A dropped connection loses the messages until it is subscribed again (ioredis resubscribes
    // on its own, but says nothing when that is confirmed: subscribing again says it).
    let dropped = false
    subscriber.on('close', () => {
      if (this.subscriber !== subscriber) return
      dropped = true
      if (!this.live) return
      this.live = false
      this.missedListeners.forEach((notify) => notify())
    })
    subscriber.on('ready', () => {
      if (!dropped || this.subscriber !== subscriber) return
      dropped = false
      confirm().catch(() => undefined)
    })
  }

  eventsReady(): Promise<void> {
    return this.subscribed
  }

  eventsLive(): boolean {
    return this.live
  }

  onEventsMissed(listener: () => void): () => void {
    this.missedListeners.add(listener)
    this.subscribe()
    return () => this.missedListeners.delete(listener)
  }

  async close(): Promise<void> {
    this.listeners.clear()
    this.changeListeners.clear()
    this.missedListeners.clear()
    this.live = false
    this.subscriber?.disconnect()
    this.subscriber = null
    await this.webhooks.close()
  }
}

function webhookSignals(connection: RedisConnection): WebhookSignals {
  const channel = connection.raw(keys.webhookSignalsChannel)
  const listeners = new Set<(signal: WebhookSignal) => void>()
  let subscriber: RedisClient | null = null
  return {
    async publish(signal) {
      if (signal.refs.length) await connection.client.publish(channel, JSON.stringify(signal))
    },
    subscribe(listener) {
      listeners.add(listener)
      if (!subscriber) {
        subscriber = connection.duplicate()
        void subscriber.subscribe(channel)
        subscriber.on('message', (_channel: string, message: string) => {
          const signal = JSON.parse(message) as WebhookSignal
          listeners.forEach((notify) => notify(signal))
        })
      }
      return () => listeners.delete(listener)
    },
    async close() {
      listeners.clear()
      subscriber?.disconnect()
      subscriber = null
    },
  }
}
