import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { redisUrl, uniquePrefix } from '../../test/support/redis'
import { startRedisCluster, type RedisClusterHandle } from '../../test/support/redis-cluster'
import type { BackendOptions } from '../../storage'
import { SERVER_ENV_DEFAULTS, type SoakOptions } from './args'
import { checkHook, type HookReport, type Observations } from './checks'
import { Cluster, type Instance } from './cluster'
import { memoryVerdict, type MemoryVerdict } from './memory'
import { metricTotals, readEventLog, RecordWatcher, webhookState } from './observe'
import { Producer, type ProducerStats } from './producer'
import { SoakReceiver } from './receiver'
import { VictimPicker } from './victims'
import { configure, NS, startUpstream, type SoakWebhook } from './setup'

/** Everything the report prints; `violations` empty = the soak passed. */
export interface SoakResult {
  runDir: string
  durationMs: number
  drain: { ms: number; complete: boolean }
  events: { produced: number; byFamily: Record<string, number> }
  hooks: HookReport[]
  kills: { total: number; survived: number; restartMs: number[] }
  crashes: Instance[]
  instances: Instance[]
  producer: ProducerStats
  /** When producing started (ms since epoch): time 0 of the memory table. */
  startedAt: number
  memory: MemoryVerdict
  violations: string[]
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * One soak: Verdaccio, a receiver, N servers on one Redis (or a Redis Cluster), producer + chaos for the duration,
 * then a bounded drain and the checks. Never throws for a violation; the result lists them.
 */
export async function runSoak(
  options: SoakOptions,
  log: (line: string) => void = () => undefined,
): Promise<SoakResult> {
  if (!existsSync(options.serverEntry))
    throw new Error(
      `no built server at ${options.serverEntry}: run NITRO_OUTPUT_DIR=.output-soak npx nitro build and set SERVER_ENTRY=.output-soak/server/index.mjs`,
    )
  const runDir = mkdtempSync(join(tmpdir(), 'pf-soak-'))
  // One Redis for the receiver kit's dedupe marks, and for the servers unless they use a cluster.
  const redis = await redisUrl()
  const prefix = uniquePrefix('soak')
  const token = `fwp_${randomBytes(30).toString('hex').slice(0, 43)}`
  let ownCluster: RedisClusterHandle | null = null
  const clusterNodes =
    options.storage === 'cluster'
      ? options.clusterNodes || process.env.REDIS_CLUSTER_NODES || (ownCluster = await startRedisCluster(3)).nodes
      : null
  const storage: BackendOptions = clusterNodes
    ? { redisClusterNodes: clusterNodes, redisPrefix: prefix }
    : { redisUrl: redis, redisPrefix: prefix }
  const storageEnv: Record<string, string> = clusterNodes ? { REDIS_CLUSTER_NODES: clusterNodes } : { REDIS_URL: redis }
  log(
    `soak: run dir ${runDir} (server logs), ${clusterNodes ? `Redis Cluster ${clusterNodes}` : `Redis ${redis}`} prefix ${prefix}`,
  )
  const registry = await startUpstream()
  // The receiver kit's dedupe marks live beside (not under) the service's prefix.
  const receiver = await new SoakReceiver({
    doomRate: options.doomRate,
    redis: { url: redis, prefix: `${prefix}-receiver:` },
  }).start()
  const env = {
    ...SERVER_ENV_DEFAULTS,
    WEBHOOK_BUFFER: String(options.buffer),
    ...options.serverEnv,
    ...storageEnv,
    REDIS_PREFIX: prefix,
    BOOTSTRAP_TOKEN: token,
  }
  const cluster = new Cluster(options.serverEntry, env, runDir)
  try {
    await cluster.start(options.processes)
    const webhooks = await configure(cluster.liveUrls()[0], token, registry, receiver)
    // The memory witness joins once the others have adopted the webhooks; its long lease makes it slow to adopt any.
    if (options.witness) await cluster.addWitness({ WEBHOOK_LEASE: '30m' })
    await sleep(1_500)
    const startedAt = Date.now()
    await cluster.sampleMemory()
    const watcher = new RecordWatcher(cluster, token, webhooks)
    const producer = new Producer(cluster, token, webhooks, receiver)
    watcher.start()
    producer.start()
    const victims = new VictimPicker(cluster, receiver, webhooks, storage)
    const onKill = (slot: number, why: string) =>
      log(
        `soak: ${((Date.now() - startedAt) / 1000).toFixed(0)} s  SIGKILL slot ${slot}, ${why} (kill #${cluster.kills.length + 1})`,
      )
    cluster.chaos(options.killMinMs, options.killMaxMs, onKill, () => victims.pick())
    let lastProgress = Date.now()
    while (Date.now() - startedAt < options.durationMs) {
      await sleep(Math.min(5_000, options.durationMs - (Date.now() - startedAt)))
      await cluster.sampleMemory()
      if (Date.now() - lastProgress >= 30_000) {
        lastProgress = Date.now()
        log(
          `soak: ${((Date.now() - startedAt) / 1000).toFixed(0)} s  attempts ${receiver.attempts.length}  kills ${cluster.kills.length}  live ${cluster.liveUrls().length}`,
        )
      }
    }
    log('soak: producing stopped; draining')
    await producer.stop()
    await cluster.stopChaos()
    await victims.close()
    await cluster.ensureAllUp()
    const drain = await drainBacklog(cluster, token, webhooks, receiver, watcher, storage, options.drainTimeoutMs)
    await cluster.sampleMemory()
    log(`soak: drain ${drain.complete ? 'complete' : 'TIMED OUT'} after ${(drain.ms / 1000).toFixed(1)} s`)
    await watcher.stop()
    await watcher.poll()
    await cluster.sampleMemory()
    const obs: Observations = {
      ns: NS,
      log: await readEventLog(storage),
      webhooks,
      attempts: receiver.attempts,
      overlaps: receiver.overlaps,
      recordsSeen: [...watcher.seen.values()],
      recordsNow: watcher.latest,
      metrics: new Map(
        await Promise.all(
          webhooks.map(async (hook) => [hook.name, await metricTotals(cluster, token, hook, startedAt)] as const),
        ),
      ),
      kills: cluster.kills.length,
      handled: receiver.handled,
      absorbed: receiver.absorbed,
    }
    return summarise(obs, cluster, producer, startedAt, drain, runDir)
  } finally {
    await cluster.stop()
    await receiver.stop()
    await registry.stop()
    await ownCluster?.stop()
  }
}

/**
 * Waits (bounded) until no buffer holds anything and every subscribed event was delivered or
 * reported dropped, or the buffers are empty and the receiver has been quiet for 20 s.
 */
async function drainBacklog(
  cluster: Cluster,
  token: string,
  webhooks: SoakWebhook[],
  receiver: SoakReceiver,
  watcher: RecordWatcher,
  storage: BackendOptions,
  timeoutMs: number,
) {
  const started = Date.now()
  let lastSample = Date.now()
  for (;;) {
    await sleep(2_000)
    // The witness's readings go on through the drain (soak:ci's production phase alone is under a minute).
    if (Date.now() - lastSample >= 5_000) {
      lastSample = Date.now()
      await cluster.sampleMemory()
    }
    const states = await Promise.all(webhooks.map((hook) => webhookState(cluster, token, hook)))
    const buffersEmpty = states.every((state) => state !== null && state.bufferedEvents === 0)
    if (buffersEmpty && Date.now() - receiver.lastArrival() > 3_000) {
      await watcher.poll().catch(() => undefined)
      const obs = {
        ns: NS,
        log: await readEventLog(storage),
        webhooks,
        attempts: receiver.attempts,
        overlaps: [],
        recordsSeen: [...watcher.seen.values()],
        recordsNow: new Map(),
        metrics: new Map(),
        kills: 0,
        handled: receiver.handled,
        absorbed: receiver.absorbed,
      }
      const reports = webhooks.map((hook) => checkHook(obs, hook))
      if (reports.every((r) => r.missing.length <= r.dropped.bufferOverflow))
        return { ms: Date.now() - started, complete: true }
      // Buffers empty and nothing arriving for 20 s: whatever is missing now will not come (the checks say what).
      if (Date.now() - receiver.lastArrival() > 20_000) return { ms: Date.now() - started, complete: true }
    }
    if (Date.now() - started > timeoutMs) return { ms: Date.now() - started, complete: false }
  }
}

function summarise(
  obs: Observations,
  cluster: Cluster,
  producer: Producer,
  startedAt: number,
  drain: SoakResult['drain'],
  runDir: string,
): SoakResult {
  const durationMs = Date.now() - startedAt
  const hooks = obs.webhooks.map((hook) => checkHook(obs, hook))
  // Produced = in the log since the first webhook existed (setup's own webhook events included).
  const produced = obs.log.filter(
    (entry) => entry.event.namespace === NS && entry.event.time >= obs.webhooks[0].createdAt,
  )
  const byFamily: Record<string, number> = {}
  for (const { event } of produced) {
    const family = event.type.startsWith('audit.') ? 'audit.*' : event.type
    byFamily[family] = (byFamily[family] ?? 0) + 1
  }
  const violations = hooks.flatMap((hook) => hook.violations.map((v) => `webhook ${hook.name}: ${v}`))
  if (!drain.complete) violations.push(`backlog did not drain within the timeout`)
  for (const crash of cluster.crashes())
    violations.push(
      `server slot ${crash.slot} pid ${crash.pid} exited on its own (code ${crash.exit?.code}, signal ${crash.exit?.signal}); see ${runDir}/slot-${crash.slot}.log`,
    )
  for (const error of cluster.errors) violations.push(error)
  for (const wrong of producer.wrongDecisions) violations.push(`firewall decision: ${wrong}`)
  for (const [op, outcomes] of Object.entries(producer.stats.ops)) {
    const serverErrors = Object.entries(outcomes)
      .filter(([status]) => status.startsWith('5'))
      .reduce((n, [, count]) => n + count, 0)
    if (serverErrors) violations.push(`${serverErrors} API calls ${op} answered 5xx`)
  }
  const memory = memoryVerdict(cluster.instances)
  violations.push(...memory.violations)
  return {
    runDir,
    durationMs,
    drain,
    events: { produced: produced.length, byFamily },
    hooks,
    kills: {
      total: cluster.kills.length,
      survived: cluster.kills.filter((k) => k.restartedMs !== undefined).length,
      restartMs: cluster.kills.flatMap((k) => (k.restartedMs === undefined ? [] : [k.restartedMs])),
    },
    crashes: cluster.crashes(),
    instances: cluster.instances,
    producer: producer.stats,
    startedAt,
    memory,
    violations,
  }
}
