import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { WebhookEnginePorts } from '../ports'
import { logger } from '../../app/logger'
import { systemTimerClock, type TimerClock } from './deadline-timer'
import { DeliveryHost } from './host'
import { LogFollower } from './log-follower'
import type { WebhookRuntime } from './runtime'

interface EngineOptions {
  /** Clock for every delivery wait; the system clock by default, a fake one in tests. */
  clock?: TimerClock
  /** Lease owner id; unique per process by default. */
  owner?: string
  /** Lease time; the runtime's `WEBHOOK_LEASE` setting by default. */
  leaseTtlMs?: number
  /** Monotonic clock judging whether a lease is still held (delivery-leases.ts); `performance.now` by default. */
  leaseClock?: () => number
}

/** The running webhook engine of one process: the event-log follower and the delivery host. */
export interface WebhookEngine {
  readonly follower: LogFollower
  readonly host: DeliveryHost
  readonly owner: string
  /** Waits until routing, attempts and storage writes are all done (tests). */
  idle(): Promise<void>
  stop(): Promise<void>
}

/**
 * Starts delivery for `services` with the settings of `runtime`; resolves once every webhook this
 * process could lease has its actor restored.
 * @example const engine = await startWebhookEngine(services, runtime); ...; await engine.stop()
 */
export async function startWebhookEngine(
  services: WebhookEnginePorts,
  runtime: WebhookRuntime,
  options: EngineOptions = {},
): Promise<WebhookEngine> {
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  const leaseTtlMs = options.leaseTtlMs ?? runtime.settings.leaseMs
  const clock = options.clock ?? systemTimerClock
  const follower = new LogFollower(services.events)
  const host = new DeliveryHost(services, runtime, {
    owner,
    leaseTtlMs,
    clock,
    follower,
    ...(options.leaseClock ? { leaseClock: options.leaseClock } : {}),
  })

  await follower.ready()
  const offSignals = runtime.signals.subscribe((signal) => host.onSignal(signal))
  // Renewal well inside the lease time; the same pass adopts webhooks whose owner died. New
  // events never wait for it (the follower wakes on each append); the read here only catches up
  // after a lost notification (a Redis reconnect).
  const interval = setInterval(
    () => {
      follower.wake()
      void host.tick()
    },
    Math.max(50, Math.floor(leaseTtlMs / 3)),
  )
  interval.unref()

  const started = Date.now()
  await host.tick()
  logger.info('webhook engine started', { owner, webhooks: host.owned().length, restoreMillis: Date.now() - started })

  let stopping: Promise<void> | null = null
  return {
    follower,
    host,
    owner,
    async idle() {
      // Reads may wake actors and bookkeeping may append events for the follower: loop until both are quiet.
      for (let i = 0; i < 20; i++) {
        await follower.idle()
        await host.idle()
        if (!(await follower.behind())) return
        follower.wake()
      }
    },
    stop() {
      stopping ??= (async () => {
        clearInterval(interval)
        await follower.stop()
        await host.stop()
        offSignals()
        await runtime.signals.close()
        logger.info('webhook engine stopped', { owner })
      })()
      return stopping
    },
  }
}
