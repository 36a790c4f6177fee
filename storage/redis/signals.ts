import type { SignalBus, WebhookSignal, WebhookSignals } from '../ports'
import { keys } from '../repositories/keys'
import type { RedisClient, RedisConnection } from './connection'

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
  readonly webhooks: WebhookSignals

  constructor(private readonly connection: RedisConnection) {
    this.webhooks = webhookSignals(connection)
  }

  onEvents(listener: (ns: string) => void): () => void {
    this.listeners.add(listener)
    if (!this.subscriber) {
      this.subscriber = this.connection.duplicate()
      this.subscribed = this.subscriber.subscribe(this.connection.raw(keys.eventsChannel)).then(() => undefined)
      // Handled here too: a listener that never asks `eventsReady` (token lookups) must not turn a
      // close before the subscription completed into an unhandled rejection.
      this.subscribed.catch(() => undefined)
      this.subscriber.on('message', (_channel: string, ns: string) => this.listeners.forEach((notify) => notify(ns)))
    }
    return () => this.listeners.delete(listener)
  }

  eventsReady(): Promise<void> {
    return this.subscribed
  }

  async close(): Promise<void> {
    this.listeners.clear()
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
