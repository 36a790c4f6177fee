import { EventEmitter } from 'node:events'
import type { Backend } from './backend'
import { keys } from './repositories/keys'
import { RedisBackend, type RedisClient } from './redis-backend'

/**
 * Wake-ups for delivery actors, which may live in another process: `changed` (document changed:
 * release, rotation, edit) and `deleted`. New events need no signal: the owner of each webhook
 * follows its namespace's event log. Signals
 * are hints only: the delivery host also reconciles from storage periodically, so a lost signal
 * delays work but never loses it.
 */
export interface WebhookSignal {
  kind: 'changed' | 'deleted'
  /** `ns/id` references. */
  refs: string[]
}

export interface WebhookSignals {
  publish(signal: WebhookSignal): Promise<void>
  subscribe(listener: (signal: WebhookSignal) => void): () => void
  close(): Promise<void>
}

const cache = new WeakMap<Backend, WebhookSignals>()

/**
 * The signal channel of a backend: Redis pub/sub (every process) or an in-process emitter.
 * @example webhookSignals(backend).publish({ kind: 'changed', refs: ['default/wh-1'] })
 */
export function webhookSignals(backend: Backend): WebhookSignals {
  let signals = cache.get(backend)
  if (!signals) {
    signals = backend instanceof RedisBackend ? redisSignals(backend) : localSignals()
    cache.set(backend, signals)
  }
  return signals
}

function localSignals(): WebhookSignals {
  const emitter = new EventEmitter()
  emitter.setMaxListeners(0)
  return {
    async publish(signal) {
      emitter.emit('signal', signal)
    },
    subscribe(listener) {
      emitter.on('signal', listener)
      return () => emitter.off('signal', listener)
    },
    async close() {
      emitter.removeAllListeners()
    },
  }
}

function redisSignals(backend: RedisBackend): WebhookSignals {
  // The backend's key prefix keeps services sharing one Redis under different prefixes apart.
  const channel = `${backend.prefix}:${keys.webhookSignalsChannel}`
  const listeners = new Set<(signal: WebhookSignal) => void>()
  let subscriber: RedisClient | null = null
  return {
    async publish(signal) {
      if (signal.refs.length) await backend.redis.publish(channel, JSON.stringify(signal))
    },
    subscribe(listener) {
      listeners.add(listener)
      if (!subscriber) {
        // A subscribed ioredis connection cannot run other commands: use a dedicated one.
        subscriber = backend.duplicateConnection()
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
      cache.delete(backend)
    },
  }
}
