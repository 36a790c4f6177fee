/**
 * Retention benchmark: 1 million firewall decisions appended to one firewall log in Redis at a
 * constant rate of simulated time, with LOG_RETENTION=1h enforced by the real RetentionWorker
 * (a pass every simulated minute, on an injected clock). Prints the log's length and memory
 * at intervals and at the end. Asserts nothing.
 *   npx tsx bench/retention.bench.ts [--entries 1000000] [--hours 10] [--retention 1h]
 *
 * Honesty note: on Redis a log entry's time is its stream id, which XADD '*' takes from the
 * wall clock. To let simulated time pass, entries are appended here with explicit ids taken
 * from the simulated clock (same key, same field layout as RedisBackend.logAppend). The trim
 * itself is the production path: RetentionWorker -> RetainedLogRepository -> backend.logTrimBefore -> XTRIM MINID.
 */
import { parseArgs } from 'node:util'
import { createServices } from '../server/app/services'
import { configFromEnv } from '../server/app/config'
import { parseDuration } from '../server/common/duration'
import { newId } from '../server/common/ids'
import { FirewallInput, type Firewall } from '../server/firewall/schema'
import type { DecisionLogEntry } from '../server/firewall/log-query'
import { RetentionWorker } from '../server/observability/retention'
import { RedisBackend } from '../storage/redis-backend'
import { keys } from '../storage/repositories/keys'
import { redisUrl, uniquePrefix } from '../test/support/redis'

const { values: args } = parseArgs({
  options: {
    entries: { type: 'string', default: '1000000' },
    hours: { type: 'string', default: '10' },
    retention: { type: 'string', default: '1h' },
  },
})
const ENTRIES = Number(args.entries)
const SPAN_MS = Number(args.hours) * 3_600_000
const RETENTION_MS = parseDuration(args.retention!)
const STEP_MS = SPAN_MS / ENTRIES
// A batch never spans more than a simulated minute, so each pass runs on time.
const BATCH = Math.max(1, Math.min(2_000, Math.floor(60_000 / STEP_MS)))
const REPORT_EVERY = Math.ceil(ENTRIES / 10)
const NS = 'bench'
const FW = 'web'

/** A decision as the proxy records it (docs/webhooks.md fields), ~500 bytes of JSON. */
function decision(i: number, at: number): DecisionLogEntry {
  const blocked = i % 20 === 0
  return {
    id: newId('log', at),
    time: new Date(at).toISOString(),
    outcome: blocked ? 'blocked' : 'allowed',
    firewall: FW,
    firewallVersion: 3,
    executionPhase: 'download',
    blocked,
    ecosystem: 'npm',
    packageName: `package-${i % 5000}`,
    version: `1.${i % 40}.${i % 7}`,
    upstream: 'npmjs',
    rule: blocked ? 'no-fresh-versions' : '',
    user: `ci-bot-${i % 12}`,
    request: newId('req', at),
    message: blocked ? 'version published less than 3 days ago' : 'allowed',
    userAgent: 'npm/10.8.2 node/v20.19.0 linux x64 workspaces/false',
    remoteAddress: `10.1.${i % 250}.${i % 200}`,
  }
}

// The worker's per-pass info lines would drown the figures.
process.env.LOG_LEVEL ??= 'warn'

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`

async function main() {
  const backend = new RedisBackend(await redisUrl(), uniquePrefix('bench-retention'))
  const redis = backend.redis
  const start = Date.now()
  const clock = {
    at: start,
    now() {
      return this.at
    },
  }
  const services = createServices(backend, { clock, config: configFromEnv({}) })
  await services.namespaces.create({ id: NS, owner: 'owner', createdAt: new Date(start).toISOString() })
  const input = FirewallInput.parse({ id: FW })
  await services.firewalls.mutate(NS, FW, { userId: 'owner' }, new Date(start).toISOString(), () => ({
    next: { ...input, id: FW, name: FW, version: 0, updatedAt: '' } as Firewall,
    summary: 'bench',
    result: () => undefined,
  }))
  const worker = new RetentionWorker({
    logs: services.retainedLogs,
    clock,
    retentionMs: RETENTION_MS,
    intervalMs: 60_000,
    owner: 'bench',
  })
  const key = `${backend.prefix}:log:${keys.firewallLog(NS, FW)}`
  const baseline = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1])

  const report = async (appended: number) => {
    const [length, usage, info] = await Promise.all([
      redis.xlen(key),
      redis.memory('USAGE', key, 'SAMPLES', '0'),
      redis.info('memory'),
    ])
    const used = Number(/used_memory:(\d+)/.exec(info)![1])
    const simulatedH = ((clock.at - start) / 3_600_000).toFixed(2).padStart(6)
    console.log(
      `${String(appended).padStart(9)} appended  t=${simulatedH} h  log=${String(length).padStart(8)} entries  key=${mb(Number(usage)).padStart(10)}  redis used=${mb(used).padStart(10)} (+${mb(used - baseline)})  wall ${((Date.now() - wallStart) / 1000).toFixed(1)} s`,
    )
    return { length, usage: Number(usage) }
  }

  console.log(
    `\nRetention benchmark: ${ENTRIES} decisions over ${args.hours} h of simulated time (${(1000 / STEP_MS).toFixed(1)}/s), LOG_RETENTION=${args.retention}, a retention pass every simulated minute\n`,
  )
  const wallStart = Date.now()
  let nextPass = start + 60_000
  let passes = 0
  let trimmed = 0
  let lastMs = -1
  let seq = 0
  let peak = { length: 0, usage: 0 }
  let nextReport = REPORT_EVERY
  for (let i = 0; i < ENTRIES; i += BATCH) {
    const pipeline = redis.pipeline()
    for (let j = i; j < Math.min(ENTRIES, i + BATCH); j++) {
      const at = Math.floor(start + j * STEP_MS)
      seq = at === lastMs ? seq + 1 : 0
      lastMs = at
      pipeline.xadd(key, `${at}-${seq}`, 'd', JSON.stringify(decision(j, at)))
    }
    await pipeline.exec()
    clock.at = Math.floor(start + Math.min(ENTRIES, i + BATCH) * STEP_MS)
    // Every simulated minute that passed during this batch gets its retention pass.
    for (; nextPass <= clock.at; nextPass += 60_000) {
      const pass = await worker.runOnce()
      passes++
      trimmed += pass?.removed.firewall ?? 0
    }
    const appended = Math.min(ENTRIES, i + BATCH)
    if (appended >= nextReport || appended === ENTRIES) {
      nextReport += REPORT_EVERY
      const sample = await report(appended)
      if (sample.usage > peak.usage) peak = sample
    }
  }
  const steady = Math.round(RETENTION_MS / STEP_MS)
  console.log(
    `\n${passes} retention passes removed ${trimmed} entries; expected steady state ≈ ${steady} entries (rate × retention)`,
  )
  console.log(
    `peak key size ${mb(peak.usage)} at ${peak.length} entries (${Math.round(peak.usage / Math.max(1, peak.length))} bytes/entry)`,
  )
  await worker.stop()
  await redis.del(key)
  await backend.close()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
