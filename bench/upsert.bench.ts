/**
 * Rule upsert benchmark: the write path alone, no webhook fan-out. The built server on a Redis of
 * the bench's own (so INFO commandstats counts only its commands), 16 firewalls of the webhook
 * bench's `api` phase (one upstream, ten rules once warm), 16 clients upserting rules of their own
 * firewalls at RATE upserts/s together (bench/support/upsert-load.ts, the webhook bench's load; a
 * fixed rate, so that two builds compared do the same work per second, which a loaded machine's
 * batching of writes and replies otherwise varies). Prints the service's CPU per upsert (from
 * /proc), the Redis round trips per upsert (top-level commands; the script's own commands counted
 * apart) and the latency. Asserts nothing.
 *   npm run bench:upsert            (builds first if needed; DURATION=10 seconds, RATE=150)
 * BENCH_LOG_LEVEL (info by default, the deployed default); SERVER_ENTRY runs another build (an A/B
 * pair: `SERVER_ENTRY=/tmp/old/.output/server/index.mjs`); BENCH_SERVER_NODE_OPTIONS goes to the
 * service (a CPU profile: `--import $PWD/bench/support/cpu-profile-hook.mjs`, then
 * `npx tsx bench/support/profile-breakdown.ts --upsert --window ... cpu-<pid>.cpuprofile`).
 */
import { loadavg } from 'node:os'
import { Redis } from 'ioredis'
import { startServer } from '../test/support/server'
import { redisUrl, uniquePrefix } from '../test/support/redis'
import { openMonitor } from '../test/support/redis-monitor'
import { cpuSplit } from './support/process-cpu'
import { percentile } from './support/webhook-sink'
import { upsertLoad } from './support/upsert-load'

const DURATION = Number(process.env.DURATION ?? 10)
const RATE = Number(process.env.RATE ?? 150)
const CLIENTS = 16
const TOKEN = `pf_bench_${'a'.repeat(40)}`
const NS = 'default'
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info'

const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n)

/** Calls per command name so far (INFO commandstats; commands a script runs count under their own names). */
async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats')
  return new Map(
    [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((match) => [match[1], Number(match[2])] as const),
  )
}

/** Top-level commands on the namespace's or the token's keys (round trips: MONITOR's lines not run by a script), by name, over `run`. */
async function roundTrips(url: string, run: () => Promise<number>): Promise<{ perCall: Map<string, number> }> {
  const counts = new Map<string, number>()
  const monitor = await openMonitor(url, ({ args, source }) => {
    // The upserts' own: on the namespace's keys or the token's (not the service's leases and timers).
    if (source === 'lua' || !args.some((arg) => arg.includes(`{${NS}}`) || arg.includes(':token:'))) return
    const name = args[0].toLowerCase()
    counts.set(name, (counts.get(name) ?? 0) + 1)
  })
  // MONITOR's own set-up lines come before the first call.
  await new Promise((resolve) => setTimeout(resolve, 200))
  counts.clear()
  const calls = await run()
  await new Promise((resolve) => setTimeout(resolve, 200))
  monitor.destroy()
  return { perCall: new Map([...counts].map(([name, n]) => [name, n / calls])) }
}

/** One upsert of the MONITOR sample: a pattern no upsert of the load sent, so every one is a change. */
function upsert(url: string, client: number, k: number): Promise<Response> {
  return fetch(`${url}/v1/${NS}/config/api-${client}/rules/r${k % 10}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      executionPhase: 'download',
      selector: { function: { name: 'packageName', patterns: [`sample-${client}-${k}-*`] } },
      ruleEffect: { block: true, log: true },
    }),
  })
}

async function main() {
  const url = await redisUrl()
  const server = await startServer({
    REDIS_URL: url,
    REDIS_PREFIX: uniquePrefix('bench'),
    ...(process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {}),
    BOOTSTRAP_TOKEN: TOKEN,
    LOG_LEVEL,
    API_RATE_LIMIT: 'off',
  })
  const pid = server.process.pid
  const redis = new Redis(url)
  try {
    for (let client = 0; client < CLIENTS; client++) {
      const response = await fetch(`${server.url}/v1/${NS}/config/api-${client}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }] }),
      })
      if (response.status !== 201) throw new Error(`set-up: ${response.status} ${await response.text()}`)
    }
    let k = 0
    const load = (seconds: number) =>
      upsertLoad({ urls: [server.url], token: TOKEN, ns: NS, prefix: 'api', clients: CLIENTS, rate: RATE, seconds })
    // Warm-up: every firewall reaches its ten rules, and the JIT its steady state.
    await load(3)
    const sample = 50
    const { perCall } = await roundTrips(url, async () => {
      for (let i = 0; i < sample; i++) await (await upsert(server.url, i % CLIENTS, k++)).arrayBuffer()
      return sample
    })
    const statsBefore = await commandStats(redis)
    const cpuBefore = cpuSplit(pid)
    const from = monotonicMicros()
    const { latencies, failed, done } = await load(DURATION)
    const window = `${from},${monotonicMicros()}`
    const cpuAfter = cpuSplit(pid)
    const system = cpuAfter.system - cpuBefore.system
    const cpu = cpuAfter.user - cpuBefore.user + system
    const statsAfter = await commandStats(redis)
    const commands = [...statsAfter]
      .map(([name, n]) => [name, (n - (statsBefore.get(name) ?? 0)) / done] as const)
      .filter(([name, n]) => n > 0.001 && name !== 'info')
      .sort((a, b) => b[1] - a[1])
    const document = await (
      await fetch(`${server.url}/v1/${NS}/config/api-0`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text()
    const p = (n: number) => percentile(latencies, n).toFixed(1)
    console.log(
      `\nrule upserts: ${CLIENTS} clients, ${RATE}/s asked for ${DURATION} s, log level ${LOG_LEVEL}, firewall document ${document.length} B, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    )
    console.log(
      `  ${done} upserts (${failed} failed), ${(done / DURATION).toFixed(0)}/s   p50 ${p(50)} ms   p99 ${p(99)} ms`,
    )
    console.log(
      `  service CPU ${((cpu / done) * 1e6).toFixed(0)} µs per upsert (system ${((system / done) * 1e6).toFixed(0)})`,
    )
    console.log(
      `  round trips per upsert (MONITOR, ${sample} upserts one at a time): ${[...perCall.values()].reduce((a, b) => a + b, 0).toFixed(2)} = ${[
        ...perCall,
      ]
        .map(([name, n]) => `${name} ${n.toFixed(2)}`)
        .join(', ')}`,
    )
    console.log(
      `  Redis commands per upsert (commandstats, scripts' own included): ${commands.map(([name, n]) => `${name} ${n.toFixed(2)}`).join(', ')}`,
    )
    if (process.env.BENCH_SERVER_NODE_OPTIONS)
      console.log(`  profile window: --window ${window} --requests ${done} --cpu-us ${((cpu / done) * 1e6).toFixed(1)}`)
  } finally {
    redis.disconnect()
    await server.stop()
  }
}

main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
