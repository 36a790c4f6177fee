/**
 * API benchmark: the built server on loopback with 50 firewalls in Redis, 50 connections.
 * Prints requests/s and latency percentiles for the authenticated list and get, and their
 * ratio to unauthenticated /healthz measured in the same run, and the service's CPU per request
 * (user + system time of its process over the measured span, from /proc: the figure a loaded
 * machine disturbs least) with its system (kernel) part, the Redis commands per request (INFO
 * commandstats: exact when the bench runs its own redis-server, REDIS_URL unset), and on a second
 * line the bytes of one response and the load generator's own CPU per request: it runs in this
 * process on the same cores, and reading list's larger answer costs it more than the service
 * (docs/performance.md, "List's answer on the wire"). When `wrk` is installed (Debian package) the
 * three targets run again under it: one C thread in its own process, whose reading of a large answer
 * costs a few µs, so the rates compare the service rather than the generator. The targets take
 * turns: ROUNDS rounds (3 by default) of DURATION seconds each (4 by default), the order rotated
 * every round, so that a slow spell of the machine falls on every target rather than on one; each
 * round's ratio is to that round's `/healthz`, and the goal line reads the median round. Asserts
 * nothing.
 *   npm run bench:api            (builds first if needed)
 * BENCH_STORAGE=fs keeps the data in a data directory instead of Redis; BENCH_LOG_LEVEL sets the
 * service's log level (error by default, info is the deployed default); BENCH_SERVER_NODE_OPTIONS
 * goes to the service (a CPU profile: `--import $PWD/bench/support/cpu-profile-hook.mjs`).
 */
import { loadavg } from 'node:os'
import autocannon from 'autocannon'
import { Redis } from 'ioredis'
import { startServer } from '../test/support/server'
import { createBenchFirewalls } from './support/api-firewalls'
import { redisUrl, uniquePrefix } from '../test/support/redis'
import { cpuSplit, monotonicMicros } from './support/process-cpu'
import { wrk, wrkAvailable } from './support/wrk'
import { median } from './support/median'

const DURATION = Number(process.env.DURATION ?? 4)
const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 3))
const CONNECTIONS = 50
const TOKEN = 'fwp_benchmarkToken00000000000000000000000001'
const STORAGE = process.env.BENCH_STORAGE === 'fs' ? 'fs' : 'redis'
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'error'
const GENERATOR_SAYS: Record<'autocannon' | 'wrk', string> = {
  autocannon: 'autocannon, in this process (parsing a large answer costs it about as much CPU as the service)',
  wrk: 'wrk, one thread in its own process (C: a large answer costs it a few µs)',
}

/** Commands Redis has run so far (INFO commandstats): exact per request only on a Redis of the bench's own. */
async function redisCommands(redis: Redis | null): Promise<number> {
  if (!redis) return NaN
  const info = await redis.info('commandstats')
  return [...info.matchAll(/calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0)
}

type Generator = 'autocannon' | 'wrk'

/** One run of `generator` against `url`: requests/s, latency, bytes and its own CPU. */
async function generate(generator: Generator, url: string, seconds: number, headers: Record<string, string>) {
  if (generator === 'wrk') return wrk(url, CONNECTIONS, seconds, headers)
  const loadGeneratorBefore = process.cpuUsage()
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers })
  const loadGenerator = process.cpuUsage(loadGeneratorBefore)
  return {
    total: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    bytesPerResponse: result.throughput.total / result.requests.total,
    // process.cpuUsage counts µs (every thread of this process: autocannon and the bench).
    loadGeneratorPerRequestUs: (loadGenerator.user + loadGenerator.system) / result.requests.total,
  }
}

async function load(
  generator: Generator,
  pid: number | undefined,
  redis: Redis | null,
  url: string,
  headers: Record<string, string> = {},
) {
  const commandsBefore = await redisCommands(redis)
  const cpuBefore = cpuSplit(pid)
  const from = monotonicMicros()
  const result = await generate(generator, url, DURATION, headers)
  const window = `${from},${monotonicMicros()}`
  const cpuAfter = cpuSplit(pid)
  const system = cpuAfter.system - cpuBefore.system
  const cpu = cpuAfter.user - cpuBefore.user + system
  // Less the INFO call itself.
  const commands = (await redisCommands(redis)) - commandsBefore - 1
  return {
    ...result,
    redisPerRequest: commands / result.total,
    window,
    cpuPerRequestUs: (cpu / result.total) * 1e6,
    systemPerRequestUs: (system / result.total) * 1e6,
  }
}

type Measured = Awaited<ReturnType<typeof load>>

/** One target's two printed lines; `healthzRps`: the baseline of the same round. */
function row(name: string, r: Measured, healthzRps: number, withRedis: boolean): string {
  return `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(1).padStart(5)} ms   p99 ${r.p99.toFixed(1).padStart(5)} ms   ratio ${(r.rps / healthzRps).toFixed(2)}   CPU ${r.cpuPerRequestUs.toFixed(0).padStart(4)} µs/req (system ${r.systemPerRequestUs.toFixed(0).padStart(3)})${withRedis ? `   Redis ${r.redisPerRequest.toFixed(3)} cmd/req` : ''}   errors ${r.errors}\n${''.padEnd(28)} ${r.bytesPerResponse.toFixed(0).padStart(8)} bytes/response (headers and body)   load generator CPU ${r.loadGeneratorPerRequestUs.toFixed(0).padStart(4)} µs/req`
}

async function main() {
  const url = STORAGE === 'redis' ? await redisUrl() : null
  const server = await startServer({
    ...(url ? { REDIS_URL: url, REDIS_PREFIX: uniquePrefix('bench') } : {}),
    ...(process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {}),
    BOOTSTRAP_TOKEN: TOKEN,
    LOG_LEVEL,
    API_RATE_LIMIT: 'off',
  })
  const pid = server.process.pid
  // To attach `perf` or `strace` to the service while a target runs (docs/performance.md).
  console.log(`service pid ${pid}`)
  const redis = url ? new Redis(url) : null
  try {
    await createBenchFirewalls(server.url, TOKEN)
    const auth = { authorization: `Bearer ${TOKEN}` }
    const generators: Generator[] = (await wrkAvailable()) ? ['autocannon', 'wrk'] : ['autocannon']
    const where = STORAGE === 'fs' ? 'a data directory' : 'Redis'
    console.log(
      `\nAPI benchmark: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION}s per target in turn, 50 firewalls in ${where}, log level ${LOG_LEVEL}, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    )
    if (generators.length === 1) console.log('(wrk is not installed: `apt-get install wrk` adds its lines)')
    for (const generator of generators) {
      const targets = [
        { name: 'healthz', label: 'GET /healthz (baseline)', url: `${server.url}/healthz`, headers: {} },
        { name: 'list', label: 'GET /v1/{ns}/config', url: `${server.url}/v1/default/config`, headers: auth },
        { name: 'get', label: 'GET /v1/{ns}/config/{fw}', url: `${server.url}/v1/default/config/fw-7`, headers: auth },
      ] as const
      // Warm-up so JIT and connection set-up do not count.
      for (const target of targets) await generate(generator, target.url, 2, target.headers)
      console.log(`\nload generator: ${GENERATOR_SAYS[generator]}, load average ${loadavg()[0].toFixed(1)}`)
      const rounds: Record<(typeof targets)[number]['name'], Measured>[] = []
      for (let round = 0; round < ROUNDS; round++) {
        const measured = {} as (typeof rounds)[number]
        // Rotated: each target runs first, second and third in turn.
        for (let turn = 0; turn < targets.length; turn++) {
          const target = targets[(round + turn) % targets.length]
          measured[target.name] = await load(generator, pid, redis, target.url, target.headers)
        }
        rounds.push(measured)
        const healthz = measured.healthz
        console.log(`\nround ${round + 1} of ${ROUNDS}, load average ${loadavg()[0].toFixed(1)}\n`)
        for (const target of targets) console.log(row(target.label, measured[target.name], healthz.rps, redis !== null))
        if (process.env.BENCH_SERVER_NODE_OPTIONS)
          for (const target of targets) {
            const r = measured[target.name]
            console.log(
              `profile window ${generator} ${target.name}: --window ${r.window} --requests ${r.total} --cpu-us ${r.cpuPerRequestUs.toFixed(1)}`,
            )
          }
      }
      const ratios = (name: 'list' | 'get') => rounds.map((r) => r[name].rps / r.healthz.rps)
      const p99s = rounds.map((r) => r.list.p99)
      const listRatio = median(ratios('list'))
      const getRatio = median(ratios('get'))
      const listP99 = median(p99s)
      const range = (values: number[], digits: number) =>
        `${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}`
      console.log(
        `\nmedian of ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} (${generator}): list ${listRatio.toFixed(2)}x (rounds ${range(ratios('list'), 2)}), list p99 ${listP99.toFixed(1)} ms (${range(p99s, 1)}), get ${getRatio.toFixed(2)}x (${range(ratios('get'), 2)})`,
      )
      const met = (ok: boolean) => (ok ? 'met' : 'NOT met')
      // Goals of issue #27, on the median round.
      console.log(
        `goal (${generator}): list >= 0.60 of /healthz rate (${met(listRatio >= 0.6)}), list p99 < 20 ms (${met(listP99 < 20)}), get >= 0.70 (${met(getRatio >= 0.7)})`,
      )
    }
  } finally {
    redis?.disconnect()
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
