import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, createRouter, toNodeListener } from 'h3'
import { createStorage } from 'unstorage'
import { LocalBackend, type Backend } from '../../../storage'
import { createServices, type Services } from '../../../server/app/services'
import { setServices } from '../../../server/app/runtime'
import { configFromEnv } from '../../../server/app/config'
import { createApiRouter } from '../../../server/http/router'
import { webhookOperations } from '../../../server/operations/webhooks'
import { createNamespaceWithOwner } from '../../../server/namespace/directory'
import { makeEvent } from '../../../server/events/factory'
import type { NamespaceEvent } from '../../../server/events/schemas'
import schemaRoute from '../../../server/routes/schemas/webhook-events-v1.json.get'
import { createWebhookRuntime } from '../../../server/webhooks/delivery/runtime'
import { parseWebhookSettings } from '../../../server/webhooks/configuration/settings'
import { systemTimerClock, type TimerClock } from '../../../server/webhooks/delivery/deadline-timer'
import { startWebhookEngine, type WebhookEngine } from '../../../server/webhooks/delivery/engine'
import type { LookupAll } from '../../../server/webhooks/protocol/ssrf'
import { makeBackend } from '../../support/backends'
import { Receiver } from './receiver'
import { runUntil, SteppingClock } from './clock'

process.env.LOG_LEVEL ??= 'warn'

export const NS = 'acme'
/** Test clock start: a real-looking time, on a whole second. */
export const T0 = Math.floor(Date.now() / 1000) * 1000

export interface HarnessOptions {
  backend?: 'memory' | 'redis' | 'cluster'
  /** Stepping (default) or the system clock. */
  clock?: 'stepping' | 'system'
  env?: Record<string, string>
  lookup?: LookupAll
  /** Start the engine (default true). */
  engine?: boolean
}

/**
 * The webhook API, the schema route and the engine in-process, with a real receiver on loopback.
 * Storage is in memory (or Redis, or the test run's Redis Cluster), time is a stepping clock unless asked otherwise.
 */
export async function startHarness(options: HarnessOptions = {}) {
  const backend: Backend =
    options.backend && options.backend !== 'memory'
      ? await makeBackend(options.backend)
      : new LocalBackend(createStorage())
  const stepping = options.clock === 'system' ? null : new SteppingClock(T0)
  const clock: TimerClock = stepping ?? systemTimerClock
  const services: Services = createServices(backend, { clock, config: { ...configFromEnv({}), port: 0 } })
  const runtime = createWebhookRuntime(
    services,
    parseWebhookSettings({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', ...options.env }),
    options.lookup,
  )
  // What the composition root hands the entry points: the services with the webhook runtime.
  const wired = { ...services, webhookRuntime: runtime, oidc: null }
  setServices(Promise.resolve(wired))
  const token = await createNamespaceWithOwner(services, NS, 'owner')

  const router = createRouter()
  router.get('/schemas/webhook-events-v1.json', schemaRoute)
  const app = createApp()
  app.use(router)
  app.use(createApiRouter(webhookOperations as never, async () => wired))
  const server: Server = createServer(toNodeListener(app))
  // Node closes an idle kept-alive socket after 5 s; on a loaded machine the next call can race that
  // close and fail with "other side closed". Tests make their calls well within a minute.
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const schema = await (await fetch(`${origin}/schemas/webhook-events-v1.json`)).json()
  const receiver = await new Receiver(() => clock.now()).start(schema)
  let engine: WebhookEngine | null =
    options.engine === false ? null : await startWebhookEngine(services, runtime, { clock, leaseTtlMs: 5_000 })
  let seq = 0

  const harness = {
    services,
    backend,
    clock,
    stepping,
    receiver,
    origin,
    token,
    get engine() {
      return engine!
    },
    async startEngine() {
      engine = await startWebhookEngine(services, runtime, { clock, leaseTtlMs: 5_000 })
      return engine
    },
    /** Calls the API as `as` (default: the namespace owner). */
    async api(method: string, path: string, body?: unknown, as = token) {
      const response = await fetch(origin + path, {
        method,
        headers: {
          authorization: `Bearer ${as}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await response.text()
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null }
    },
    /** Creates a webhook to the receiver (subscribed to `audit.test.*`) and trusts its secret. */
    async createWebhook(extra: Record<string, unknown> = {}) {
      const res = await harness.api('POST', `/v1/${NS}/webhooks`, {
        name: 'receiver',
        url: receiver.url,
        eventTypes: ['audit.test.*'],
        ...extra,
      })
      if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${JSON.stringify(res.body)}`)
      receiver.secrets = [res.body.secret]
      return res.body as { id: string; secret: string }
    },
    /** Appends `count` `audit.test.ping` events to the event log, as a producer would. */
    async appendEvents(count: number): Promise<NamespaceEvent[]> {
      const events = Array.from({ length: count }, () =>
        makeEvent(clock, NS, 'audit.test.ping', {
          action: 'test.ping',
          outcome: 'success',
          statusCode: 200,
          requestId: `n-${++seq}`,
        }),
      )
      for (let i = 0; i < events.length; i += 1000) {
        await backend.keyValue.transact([], () => ({
          writes: { events: events.slice(i, i + 1000) },
          result: undefined,
        }))
      }
      return events
    },
    idle: () => engine?.idle() ?? Promise.resolve(),
    /** Steps the clock to `time` (absolute), letting real work finish between deadlines. */
    runUntil: (time: number) => runUntil(stepping!, () => harness.idle(), time),
    runFor: (ms: number) => runUntil(stepping!, () => harness.idle(), clock.now() + ms),
    async close() {
      await engine?.stop()
      await receiver.stop()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await backend.close()
    },
  }
  return harness
}

export type Harness = Awaited<ReturnType<typeof startHarness>>

/** Every received event must be signed and schema-valid: the receiver's verdicts, as one list. */
export function receiptProblems(receiver: Receiver): string[] {
  return receiver.receipts.flatMap((receipt, index) => [
    ...(receipt.verifiedWith.length === 0 ? [`receipt ${index}: no signature verified`] : []),
    ...receipt.schemaErrors.map((error) => `receipt ${index}: ${error}`),
  ])
}
