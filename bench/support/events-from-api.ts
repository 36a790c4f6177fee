import { EventLogRepository } from '../../storage/repositories/event-log'
import { startServer, type RunningServer } from '../../test/support/server'
import type { OpenTarget } from './bench-targets'
import { sleep } from './event-producer'
import { cpuSeconds, monotonicMicros } from './process-cpu'
import { upsertLoad } from './upsert-load'
import { audit, percentile, type WebhookSink } from './webhook-sink'

interface PhaseOptions {
  ns: string
  token: string
  hooks: number
  /** Service processes on the target, the load spread over them in turn. */
  processes: number
  clients: number
  upsertsPerSecond: number
  seconds: number
  /** Extra environment of the service processes (NODE_OPTIONS for a profile). */
  serverEnv: Record<string, string>
}

type Figures = Record<string, string>

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)

/** Waits until the receiver has `target` deliveries, or has had none for `quietMs`; false when it stalled short. */
async function settle(sink: WebhookSink, target: number, quietMs: number, boundMs: number): Promise<boolean> {
  const deadline = Date.now() + boundMs
  let last = -1
  let since = Date.now()
  while (Date.now() < deadline) {
    const now = sink.received()
    if (now >= target) return true
    if (now !== last) [last, since] = [now, Date.now()]
    else if (Date.now() - since > quietMs) return false
    await sleep(50)
  }
  return false
}

/**
 * The events of production: the service's own API calls emit them. `clients` clients upsert rules
 * at `upsertsPerSecond`; each upsert appends `config.firewall.updated` and its `audit.*` event, and
 * `hooks` webhooks subscribed to both receive them all. At the default log level (info). The log
 * order of the phase's events is read back from storage and each webhook's receipts checked
 * against it: lost (missing and not announced by an overflow notice), dropped (announced),
 * duplicated, reordered.
 */
export async function eventsFromApi(target: OpenTarget, sink: WebhookSink, options: PhaseOptions): Promise<Figures> {
  // Empty storage: no webhook or firewall of another phase takes part.
  const storage = target.fresh()
  const backend = await storage.backend()
  const { ns, token, hooks, processes, clients, upsertsPerSecond, seconds } = options
  const label = processes === 1 ? 'API events, 1 process' : `API events, ${processes} processes`
  const servers: RunningServer[] = []
  try {
    for (let i = 0; i < processes; i++)
      servers.push(
        await startServer({
          ...storage.env,
          BOOTSTRAP_TOKEN: token,
          WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
          // The default level: one line per request and per delivery attempt.
          LOG_LEVEL: 'info',
          API_RATE_LIMIT: 'off',
          ...options.serverEnv,
        }),
      )
    const call = async (method: string, path: string, body: unknown) => {
      const response = await fetch(servers[0].url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
      return response.json()
    }
    for (let client = 0; client < clients; client++)
      await call('PUT', `/v1/${ns}/config/api-${client}`, {
        upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }],
      })
    const names = Array.from({ length: hooks }, (_, i) => `a${i}`)
    for (const name of names)
      await call('POST', `/v1/${ns}/webhooks`, {
        name,
        url: `${sink.url}/hook/${name}`,
        eventTypes: ['config.firewall.updated', 'audit.*'],
      })
    // The set-up's own audit events reach the webhooks created before them: let them arrive first.
    await settle(sink, Number.POSITIVE_INFINITY, 1_500, 30_000)
    await sink.reset()
    const events = new EventLogRepository(backend)
    const before = await events.lastCursor(ns)
    const cpuBefore = servers.map((server) => cpuSeconds(server.process.pid))
    const started = Date.now()
    const windowFrom = monotonicMicros()
    const load = await upsertLoad({
      urls: servers.map((server) => server.url),
      token,
      ns,
      prefix: 'api',
      clients,
      rate: upsertsPerSecond,
      seconds,
    })
    const ended = Date.now()
    const cpuDuring = servers.map((server, i) => cpuSeconds(server.process.pid) - cpuBefore[i])
    // An upsert's audit entry may be appended just after its answer: read the log once it has
    // stopped growing, or the last events are delivered but missing from `ids` (and the sink's
    // count, reached early with them, would end the wait before every webhook has its own).
    for (let last = await events.lastCursor(ns); ;) {
      await new Promise((resolve) => setTimeout(resolve, 300))
      const now = await events.lastCursor(ns)
      if (now === last) break
      last = now
    }
    const ids: string[] = []
    for (let after = before; ;) {
      const page = await events.read<{ id: string; type: string }>(ns, after, 5_000)
      if (page.length === 0) break
      for (const entry of page)
        if (entry.value.type === 'config.firewall.updated' || entry.value.type.startsWith('audit.'))
          ids.push(entry.value.id)
      after = page[page.length - 1].cursor
    }
    const drained = await settle(sink, ids.length * hooks, 10_000, 180_000)
    // The count can be reached early: receipts of the set-up's own events (the webhooks' creation
    // audits, delivered at the paced rate) may land after the reset. Wait for the receiver to go
    // quiet before auditing, or deliveries still in flight would read as lost.
    if (drained) await settle(sink, Number.POSITIVE_INFINITY, 2_000, 60_000)
    const cpuAll = servers.map((server, i) => cpuSeconds(server.process.pid) - cpuBefore[i])
    const windowTo = monotonicMicros()
    const received = await sink.collect()
    let lastReceipt = 0
    let inWindow = 0
    let dropped = 0
    let deliveries = 0
    const window = [started + 5_000, ended] as const
    for (const log of received.values()) {
      dropped += log.dropped
      deliveries += log.deliveries
      for (const at of log.at.values()) {
        lastReceipt = Math.max(lastReceipt, at)
        if (at >= window[0] && at < window[1]) inWindow++
      }
    }
    const { lost: missing, duplicated, reordered } = audit(received, names, ids)
    const asked = upsertsPerSecond * 2
    const elapsed = (ended - started) / 1000
    const p = (n: number) => percentile(load.latencies, n).toFixed(0)
    return {
      [`${label}: events produced`]: `${ids.length} in ${elapsed.toFixed(1)} s = ${(ids.length / elapsed).toFixed(0)}/s (asked ${asked}/s: ${clients} clients, ${upsertsPerSecond} upserts/s, 2 events each; ${load.done} upserts done, ${load.failed} failed)`,
      [`${label}: event-deliveries/s`]: `${(inWindow / ((window[1] - window[0]) / 1000)).toFixed(0)} steady (after the first 5 s), ${(sink.received() / ((lastReceipt - started) / 1000)).toFixed(0)} overall to the last receipt (ceiling ${asked * hooks}); ${(sink.received() / Math.max(1, deliveries)).toFixed(1)} events per delivery${drained ? '' : ' [stalled short of every delivery]'}`,
      [`${label}: dropped / lost / dup / reordered`]: `${dropped} / ${Math.max(0, missing - dropped)} / ${duplicated} / ${reordered} (of ${ids.length * hooks} event-deliveries)`,
      [`${label}: upsert latency`]: `p50 ${p(50)} ms   p99 ${p(99)} ms   max ${p(100)} ms`,
      // Less sensitive to a loaded machine than the rates: the service's CPU per unit of work.
      // With serverEnv naming cpu-profile-hook.mjs: the measured span of each process's profile.
      [`${label}: profile window`]: `--window ${windowFrom},${windowTo} --units ${sink.received()} --cpu-us ${((sum(cpuAll) * 1e6) / Math.max(1, sink.received())).toFixed(1)}`,
      [`${label}: service CPU`]: `${cpuDuring.map((s) => `${((s / elapsed) * 100).toFixed(0)}%`).join(' + ')} of a core during the load; ${((sum(cpuAll) * 1e6) / Math.max(1, sink.received())).toFixed(1)} µs per event-delivery, ${((sum(cpuAll) * 1e3) / Math.max(1, load.done)).toFixed(2)} ms per upsert (everything until drained, summed over processes)`,
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await backend.close()
  }
}
