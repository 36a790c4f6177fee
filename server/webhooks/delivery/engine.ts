import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { Services } from '../../app/services'
import { logger } from '../../app/logger'
import { systemTimerClock, type TimerClock } from './deadline-timer'
import { DeliveryHost } from './host'
import { EventRouter } from './event-router'
import type { WebhookRuntime } from './runtime'

export interface EngineOptions {
  /** Clock for every delivery wait; the system clock by default, a fake one in tests. */
  clock?: TimerClock
  /** Lease owner id; unique per process by default. */
  owner?: string
  /** Lease time; the runtime's `WEBHOOK_LEASE` setting by default. */
  leaseTtlMs?: number
}

/** The running webhook engine of one process: the router and the delivery host. */
export interface WebhookEngine {
  readonly router: EventRouter
  readonly host: DeliveryHost
  readonly owner: string
  /** Waits until routing, attempts and storage writes are all done (tests). */
  idle(): Promise<void>
  stop(): Promise<void>
}

/**
 * Starts routing and delivery for `services` with the settings of `runtime`; resolves once every
 * webhook this process could lease has its actor restored.
 * @example const engine = await startWebhookEngine(services, runtime); ...; await engine.stop()
 */
export async function startWebhookEngine(services: Services, runtime: WebhookRuntime, options: EngineOptions = {}): Promise<WebhookEngine> {
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  const leaseTtlMs = options.leaseTtlMs ?? runtime.settings.leaseMs
  const clock = options.clock ?? systemTimerClock
  const router = new EventRouter(services, runtime, { owner, leaseTtlMs })
  const host = new DeliveryHost(services, runtime, { owner, leaseTtlMs, clock })

  const offEvents = services.events.onAppended(() => router.wake())
  await services.events.notificationsReady()
  const offSignals = runtime.signals.subscribe((signal) => host.onSignal(signal))
  // Renewal well inside the lease time; the same pass adopts webhooks whose owner died.
  const interval = setInterval(() => {
    router.wake()
    void host.tick()
  }, Math.max(50, Math.floor(leaseTtlMs / 3)))
  interval.unref()

  const started = Date.now()
  await host.tick()
  router.wake()
  logger.info('webhook engine started', { owner, webhooks: host.owned().length, restoreMillis: Date.now() - started })

  let stopping: Promise<void> | null = null
  return {
    router,
    host,
    owner,
    async idle() {
      // Routing may wake the host and bookkeeping may append events for the router: loop until both are quiet.
      for (let i = 0; i < 20; i++) {
        await router.idle()
        await host.idle()
        if (!(await routerBehind(services, runtime))) return
        router.wake()
      }
    },
    stop() {
      stopping ??= (async () => {
        clearInterval(interval)
        offEvents()
        await router.stop()
        await host.stop()
        offSignals()
        await runtime.signals.close()
        logger.info('webhook engine stopped', { owner })
      })()
      return stopping
    },
  }
}

/** True when the event log holds entries the router has not routed yet. */
async function routerBehind(services: Services, runtime: WebhookRuntime): Promise<boolean> {
  const cursor = await runtime.webhooks.routerCursor()
  const next = await services.events.read(cursor, 1)
  return next.length > 0
}
