/**
 * Webhook delivery benchmark, measured from outside the service: the built server runs as its own
 * process on Redis; this process produces events (appending to the namespace log, as another
 * service process would), calls the API and receives every delivery. Prints figures, asserts nothing.
 *   npm run bench:webhooks            (builds first when the build is stale)
 * 1. Fan-out: 100 webhooks subscribed to every event, events produced at the pacing ceiling
 *    (500/s: 100 webhooks x 5 deliveries/s x 100 events = 50,000 event-deliveries/s): throughput,
 *    loss, duplicates, order; rule upserts (PUT .../rules/{id}) timed during it.
 * 2. Light load: 2 events/s to the same 100 webhooks, event time to receipt; `light2`: the same on
 *    two service processes sharing the webhooks through their leases (the split printed).
 * 3. Redis memory per 1,000,000 events for 100 webhooks: stored once, against the old layout that
 *    copied every event into each webhook's buffer (its per-copy size measured in the same run).
 * 4. One webhook with a 5,000-event backlog against its 500 events/s ceiling.
 * 5. Events from the API (`api`, and `api2` with two service processes on the same storage): 16
 *    clients make 250 rule upserts/s, each emitting `config.firewall.updated` and an `audit.*`
 *    event (500 events/s), to 100 webhooks subscribed to both, at the default log level (info):
 *    events produced against asked, event-deliveries/s, dropped, lost, reordered, upsert p99.
 * Targets (`support/bench-targets.ts`): a single Redis, then a 3-master Redis Cluster this run starts on
 * free loopback ports and stops after; the figures print side by side. The receiver reads requests
 * off the socket; BENCH_RECEIVER=http receives through node:http (support/webhook-sink.ts).
 */
import type { Backend } from '../storage'
import { keys, webhookKeys } from '../storage/repositories/keys'
import { startServer, type RunningServer } from '../test/support/server'
import { benchTargets, type BenchTarget, type OpenTarget } from './support/bench-targets'
import { eventProducer, sleep, until } from './support/event-producer'
import { audit, percentile, WebhookSink } from './support/webhook-sink'
import { eventsFromApi } from './support/events-from-api'
import { cpuSeconds, monotonicMicros } from './support/process-cpu'

const NS = 'default'
const { ping, produce } = eventProducer(NS)
const TOKEN = `pf_bench_${'a'.repeat(40)}`
const HOOKS = 100
const RATE = 500
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20)
/** Length of the light-load part; its p99 is about the slowest of a few dozen bursts, so longer is steadier. */
const LIGHT_SECONDS = Number(process.env.BENCH_LIGHT_SECONDS ?? 30)
/** Light load before the measured one (not measured): the JIT's first seconds. */
const LIGHT_WARMUP_SECONDS = Number(process.env.BENCH_LIGHT_WARMUP_SECONDS ?? 10)
/** BENCH_PHASES=light,one runs only those parts (fan-out, memory, light, light2, one, api, api2); all by default. */
const PHASES = new Set((process.env.BENCH_PHASES ?? 'fan-out,memory,light,light2,one,api,api2').split(','))
/**
 * The service's environment: NODE_OPTIONS from BENCH_SERVER_NODE_OPTIONS (a profile); WEBHOOK_BUFFER
 * from BENCH_WEBHOOK_BUFFER (a small cap, 500, keeps the buffers overflowing through the `api` phase);
 * IDLE_SCAVENGE as set here (`off`: V8 alone decides when to collect, for a comparison).
 */
const SERVER_ENV: Record<string, string> = {
  ...(process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {}),
  ...(process.env.BENCH_WEBHOOK_BUFFER ? { WEBHOOK_BUFFER: process.env.BENCH_WEBHOOK_BUFFER } : {}),
  ...(process.env.IDLE_SCAVENGE ? { IDLE_SCAVENGE: process.env.IDLE_SCAVENGE } : {}),
}
/** BENCH_TARGETS=single (or cluster) measures one target only; both by default. */
const TARGETS = (process.env.BENCH_TARGETS ?? 'single,cluster').split(',')

type Figures = Record<string, string>

async function api(
  server: RunningServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

async function fanOut(
  server: RunningServer,
  backend: Backend,
  sink: WebhookSink,
  hooks: string[],
  figures: Figures,
): Promise<void> {
  const latencies: number[] = []
  let upserting = true
  const upserts = (async () => {
    for (let i = 0; upserting; i++) {
      const started = performance.now()
      await api(server, 'PUT', `/v1/${NS}/config/bench/rules/r${i % 10}`, {
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: [`evil-${i}-*`] } },
        ruleEffect: { block: true, log: true },
      })
      latencies.push(performance.now() - started)
      await sleep(50)
    }
  })()
  const started = Date.now()
  const ids = await produce(backend, 'bench', RATE, SECONDS, new Map())
  const produced = Date.now()
  const expected = ids.length * hooks.length
  const drained = await until(() => sink.received() >= expected, 120_000)
  upserting = false
  await upserts
  const received = await sink.collect()
  let lastReceipt = 0
  for (const log of received.values()) for (const at of log.at.values()) lastReceipt = Math.max(lastReceipt, at)
  // Steady state: what arrived while events were being produced, after the first seconds.
  const window = [started + 5_000, produced] as const
  let inWindow = 0
  for (const log of received.values())
    for (const at of log.at.values()) if (at >= window[0] && at < window[1]) inWindow++
  if (process.env.BENCH_TIMELINE) {
    const perSecond = new Map<number, number>()
    for (const log of received.values())
      for (const at of log.at.values())
        perSecond.set(Math.floor((at - started) / 1000), (perSecond.get(Math.floor((at - started) / 1000)) ?? 0) + 1)
    console.log(
      'receipts per second since the first append:',
      [...perSecond]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}:${n}`)
        .join(' '),
    )
  }
  const { lost, duplicated, reordered } = audit(received, hooks, ids)
  latencies.sort((a, b) => a - b)
  figures['fan-out events produced'] =
    `${ids.length} in ${((produced - started) / 1000).toFixed(1)} s (${(ids.length / ((produced - started) / 1000)).toFixed(0)}/s asked ${RATE}/s)`
  figures['fan-out event-deliveries/s'] =
    `${(inWindow / ((window[1] - window[0]) / 1000)).toFixed(0)} steady, ${(sink.received() / ((lastReceipt - started) / 1000)).toFixed(0)} overall (ceiling 50,000)${drained ? '' : ' [not drained after 120 s]'}`
  figures['fan-out lost / duplicated / reordered'] = `${lost} / ${duplicated} / ${reordered}`
  figures['rule upsert under load'] =
    `p50 ${percentile(latencies, 50).toFixed(0)} ms   p99 ${percentile(latencies, 99).toFixed(0)} ms (${latencies.length} upserts)`
}

/** The light-load goal of #27: every receipt within 30 ms of its event, at the 99th percentile. */
const LIGHT_GOAL_P99_MS = 30

/**
 * Light load on `servers` (one, or several on the same storage sharing the webhooks through their
 * leases): figures named after `label`. CPU is summed over the processes.
 */
async function lightLoad(
  servers: RunningServer[],
  backend: Backend,
  sink: WebhookSink,
  hooks: string[],
  figures: Figures,
  label = 'light load',
): Promise<void> {
  const appended = new Map<string, number>()
  const cpuEach = () => servers.map((server) => cpuSeconds(server.process.pid))
  const cpuOf = () => cpuEach().reduce((sum, seconds) => sum + seconds, 0)
  // What the processes use with no event at all (lease renewals, passes), over 3 s before the load.
  const idleFrom = cpuOf()
  await sleep(3_000)
  const idleMsPerSecond = ((cpuOf() - idleFrom) * 1e3) / 3
  // Warm-up, not measured, right before the load: the goal is the steady state of a running
  // service. Run alone (BENCH_PHASES=light), the events of the first ~4 s at 2/s are the JIT's (last
  // receipts 55, 46, 43, 40, 32 ms falling to 17-27 ms), and they alone fill a 30 s run's p99.
  await sink.reset()
  const warm = await produce(backend, 'bench', 2, LIGHT_WARMUP_SECONDS, new Map())
  await until(() => sink.received() >= warm.length * hooks.length, 30_000)
  await sink.reset()
  const eachBefore = cpuEach()
  const cpuBefore = cpuOf()
  const windowFrom = monotonicMicros()
  const ids = await produce(backend, 'bench', 2, LIGHT_SECONDS, appended)
  await until(() => sink.received() >= ids.length * hooks.length, 30_000)
  const cpu = cpuOf() - cpuBefore
  const cpuPerProcess = cpuEach().map((seconds, i) => seconds - eachBefore[i])
  const windowTo = monotonicMicros()
  const latencies: number[] = []
  // Per event: its first and its last receipt (of the 100 webhooks). The first is the path every
  // delivery takes (notification, read, take, send); the spread after it is the work of the others.
  const first = new Map<string, number>()
  const last = new Map<string, number>()
  const received = await sink.collect()
  for (const log of received.values())
    for (const [id, at] of log.at) {
      if (!appended.has(id)) continue
      const latency = at - appended.get(id)!
      latencies.push(latency)
      first.set(id, Math.min(first.get(id) ?? Infinity, latency))
      last.set(id, Math.max(last.get(id) ?? -Infinity, latency))
    }
  latencies.sort((a, b) => a - b)
  // BENCH_SLOWEST=N: the N events with the latest last receipt, with their append time (epoch ms)
  // to match against a record of the service's stalls.
  if (process.env.BENCH_SLOWEST)
    for (const [id, lastMs] of [...last].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_SLOWEST)))
      console.log(`slow event appended ${appended.get(id)} first ${first.get(id)} ms last ${lastMs} ms`)
  const sorted = (values: Iterable<number>) => [...values].sort((a, b) => a - b)
  const [firsts, lasts] = [sorted(first.values()), sorted(last.values())]
  const p99 = percentile(latencies, 99)
  const { lost, duplicated, reordered } = audit(received, hooks, ids)
  figures[`${label} event time -> receipt`] =
    `p50 ${percentile(latencies, 50).toFixed(0)} ms   p99 ${p99.toFixed(0)} ms (${latencies.length} receipts); goal p99 < ${LIGHT_GOAL_P99_MS} ms: ${p99 < LIGHT_GOAL_P99_MS ? 'met' : 'not met'}`
  figures[`${label} first / last receipt of an event`] =
    `first p50 ${percentile(firsts, 50).toFixed(0)} ms p99 ${percentile(firsts, 99).toFixed(0)} ms; last p50 ${percentile(lasts, 50).toFixed(0)} ms p99 ${percentile(lasts, 99).toFixed(0)} ms`
  figures[`${label} lost / duplicated / reordered`] = `${lost} / ${duplicated} / ${reordered}`
  figures[`${label} service CPU`] =
    `${((cpu * 1e3) / Math.max(1, ids.length)).toFixed(2)} ms per event (${hooks.length} deliveries), ${((cpu * 1e6) / Math.max(1, ids.length * hooks.length)).toFixed(0)} µs per delivery${servers.length > 1 ? ` (summed: ${cpuPerProcess.map((seconds) => ((seconds * 1e3) / Math.max(1, ids.length)).toFixed(1)).join(' + ')} ms per event)` : ''}; idle ${idleMsPerSecond.toFixed(1)} ms/s`
  // With BENCH_SERVER_NODE_OPTIONS naming cpu-profile-hook.mjs: the measured span of the profile.
  figures[`${label} profile window`] =
    `--window ${windowFrom},${windowTo} --units ${ids.length * hooks.length} --cpu-us ${((cpu * 1e6) / Math.max(1, ids.length * hooks.length)).toFixed(1)}`
}

async function memory(
  target: OpenTarget,
  backend: Backend,
  hooks: string[],
  webhookIds: string[],
  figures: Figures,
): Promise<void> {
  const logKey = `${target.prefix}:log:${keys.eventLog(NS)}`
  // The log and the cursors share the namespace's hash tag: one node holds them all.
  const redis = await target.redis(backend, logKey)
  const [usage, length] = await Promise.all([redis.memory('USAGE', logKey, 'SAMPLES', '0'), redis.xlen(logKey)])
  const perEntry = Number(usage) / length
  const cursorBytes = (
    await Promise.all(webhookIds.map((id) => redis.memory('USAGE', `${target.prefix}:${webhookKeys.cursor(NS, id)}`)))
  ).reduce((sum: number, n) => sum + Number(n ?? 0), 0)
  // The old layout's per-webhook buffer was a Redis list of the event JSON: measure one copy.
  const sample = (await backend.logs.range<unknown>(keys.eventLog(NS), { limit: 1_000 })).map((entry) =>
    JSON.stringify(entry.value),
  )
  const listKey = `${target.prefix}:bench-copy-sample`
  const listNode = await target.redis(backend, listKey)
  await listNode.rpush(listKey, ...sample)
  const perCopy = Number(await listNode.memory('USAGE', listKey, 'SAMPLES', '0')) / sample.length
  await listNode.del(listKey)
  const million = 1_000_000
  const once = million * perEntry + cursorBytes
  const copying = million * perEntry + million * hooks.length * perCopy
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`
  figures['Redis memory per 1,000,000 events, 100 webhooks'] =
    `${mb(once)} stored once (${perEntry.toFixed(0)} B/entry) vs ${mb(copying)} copying (${perCopy.toFixed(0)} B/copy): ${(copying / once).toFixed(0)}x less`
}

async function oneWebhook(server: RunningServer, backend: Backend, sink: WebhookSink, figures: Figures): Promise<void> {
  await sink.reset()
  const created = await api(server, 'POST', `/v1/${NS}/webhooks`, {
    name: 'solo',
    url: `${sink.url}/hook/solo`,
    eventTypes: ['audit.solo.*'],
  })
  if (created.status !== 201) throw new Error(`creating the solo webhook: ${created.status}`)
  for (let i = 0; i < 5_000; i += 500) {
    const events = Array.from({ length: 500 }, () => ping('solo'))
    await backend.keyValue.transact([], () => ({ writes: { events }, result: undefined }))
  }
  await until(() => sink.received() >= 5_000, 60_000)
  const times = [...((await sink.collect()).get('solo')?.at.values() ?? [])].sort((a, b) => a - b)
  // The first five deliveries go out at once (an empty pacing window); the steady state follows.
  const steady = times.filter((t) => t > times[499])
  const rate = steady.length / ((times[times.length - 1] - times[499]) / 1000)
  figures['one webhook, 5,000 backlog'] =
    `${rate.toFixed(0)} events/s = ${((rate / 500) * 100).toFixed(1)}% of the 500 events/s ceiling`
}

async function run(benchTarget: BenchTarget): Promise<Figures> {
  const figures: Figures = {}
  const target = await benchTarget.open()
  const sink = await new WebhookSink().start()
  const backend = await target.backend()
  try {
    if (['fan-out', 'memory', 'light', 'one'].some((phase) => PHASES.has(phase)))
      await appendedPhases(benchTarget, target, backend, sink, figures)
    stage = `${benchTarget.label}: light2`
    if (PHASES.has('light2')) await lightTwoProcesses(target, sink, figures)
    for (const [phase, processes] of [
      ['api', 1],
      ['api2', 2],
    ] as const) {
      stage = `${benchTarget.label}: ${phase}`
      if (PHASES.has(phase))
        Object.assign(
          figures,
          await eventsFromApi(target, sink, {
            ns: NS,
            token: TOKEN,
            hooks: HOOKS,
            processes,
            clients: 16,
            upsertsPerSecond: 250,
            seconds: SECONDS,
            serverEnv: SERVER_ENV,
          }),
        )
    }
  } finally {
    stage = `${benchTarget.label}: stopping the receiver`
    await sink.stop()
    stage = `${benchTarget.label}: closing the storage client`
    await backend.close()
    stage = `${benchTarget.label}: stopping the target`
    await target.close?.()
    stage = 'done'
  }
  return figures
}

/** The `bench` firewall and the 100 webhooks `w0`..`w99` subscribed to its pings, created through `server`. */
async function benchWebhooks(
  server: RunningServer,
  sink: WebhookSink,
): Promise<{ hooks: string[]; webhookIds: string[] }> {
  await api(server, 'PUT', `/v1/${NS}/config/bench`, {
    upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }],
  })
  const hooks = Array.from({ length: HOOKS }, (_, i) => `w${i}`)
  const webhookIds: string[] = []
  for (const hook of hooks) {
    const created = await api(server, 'POST', `/v1/${NS}/webhooks`, {
      name: hook,
      url: `${sink.url}/hook/${hook}`,
      eventTypes: ['audit.bench.*'],
    })
    if (created.status !== 201)
      throw new Error(`creating webhook ${hook}: ${created.status} ${JSON.stringify(created.body)}`)
    webhookIds.push(created.body.id)
  }
  await sleep(1_000)
  return { hooks, webhookIds }
}

/** The service environment of the appended-events phases (delivery alone: log level error). */
const appendedEnv = (env: Record<string, string>): Record<string, string> => ({
  ...env,
  BOOTSTRAP_TOKEN: TOKEN,
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
  LOG_LEVEL: 'error',
  API_RATE_LIMIT: 'off',
  // e.g. --import $PWD/bench/support/cpu-profile-hook.mjs, to see where the service spends its time
  ...SERVER_ENV,
})

/** Webhook leases each process holds now (its `leases_owned` gauge). */
async function leasesPerProcess(servers: RunningServer[]): Promise<number[]> {
  return Promise.all(
    servers.map(async (server) => {
      const text = await (await fetch(`${server.url}/metrics`)).text()
      return Number(/^leases_owned\{kind="webhook"\} (\d+)/m.exec(text)?.[1] ?? NaN)
    }),
  )
}

/**
 * Light load on two service processes on one storage (docs/deploy.md recommends one per core).
 * The second starts after the webhooks exist, as when a deployment scales out or restarts one
 * process at a time: the first has adopted all 100, and the spread comes from how the hosts share
 * them (handed over at rest). The spread before the load and how long it took are printed.
 */
async function lightTwoProcesses(target: OpenTarget, sink: WebhookSink, figures: Figures): Promise<void> {
  const storage = target.fresh()
  const backend = await storage.backend()
  const servers: RunningServer[] = []
  const label = 'light load, 2 processes'
  try {
    servers.push(await startServer(appendedEnv(storage.env)))
    const { hooks } = await benchWebhooks(servers[0], sink)
    const alone = await leasesPerProcess(servers)
    servers.push(await startServer(appendedEnv(storage.env)))
    const joined = performance.now()
    // Even, or as the hosts left it after a while (a lease time and a few passes).
    let spread = await leasesPerProcess(servers)
    while (Math.abs(spread[0] - spread[1]) > 1 && performance.now() - joined < 30_000) {
      await sleep(250)
      spread = await leasesPerProcess(servers)
    }
    const settled = ((performance.now() - joined) / 1000).toFixed(1)
    await lightLoad(servers, backend, sink, hooks, figures, label)
    const after = await leasesPerProcess(servers)
    figures[`${label}: webhooks per process`] =
      `${alone.join('')} on the first alone; ${spread.join(' + ')} ${settled} s after the second started; ${after.join(' + ')} after the load`
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await backend.close()
  }
}

/** Phases 1-4: events appended straight to the log, one service process. */
async function appendedPhases(
  benchTarget: BenchTarget,
  target: OpenTarget,
  backend: Backend,
  sink: WebhookSink,
  figures: Figures,
): Promise<void> {
  const server = await startServer(appendedEnv(target.env))
  try {
    const { hooks, webhookIds } = await benchWebhooks(server, sink)
    stage = `${benchTarget.label}: fan-out`
    if (PHASES.has('fan-out')) await fanOut(server, backend, sink, hooks, figures)
    stage = `${benchTarget.label}: memory`
    if (PHASES.has('memory')) await memory(target, backend, hooks, webhookIds, figures)
    stage = `${benchTarget.label}: light`
    if (PHASES.has('light')) await lightLoad([server], backend, sink, hooks, figures)
    stage = `${benchTarget.label}: one`
    if (PHASES.has('one')) await oneWebhook(server, backend, sink, figures)
  } finally {
    stage = `${benchTarget.label}: stopping the service`
    await server.stop()
  }
}

/** Where the run is, named when the process would otherwise end silently (nothing left to wait on). */
let stage = 'starting'
process.on('beforeExit', () => {
  if (stage === 'printed') return
  console.error(`bench:webhooks stopped while ${stage}: a promise nothing will settle`)
  process.exitCode = 1
})

async function main() {
  const targets = await benchTargets(TARGETS)
  const results: Figures[] = []
  for (const target of targets) results.push(await run(target))
  const names = [...new Set(results.flatMap((figures) => Object.keys(figures)))]
  const width = Math.max(...names.map((name) => name.length))
  for (const [index, target] of targets.entries()) {
    console.log(
      `\nwebhooks (${target.label}; ${HOOKS} webhooks, ${RATE} events/s for ${SECONDS} s, built server + Redis + this producer/receiver on one machine)`,
    )
    for (const name of names) console.log(`  ${name.padEnd(width)}  ${results[index][name] ?? '-'}`)
  }
  console.log('')
  stage = 'printed'
  // Exit once stdout is flushed: piped output is written asynchronously and would be cut short.
  process.stdout.write('', () => process.exit(0))
}

void main().catch((error) => {
  console.error(error)
  process.exit(1)
})
