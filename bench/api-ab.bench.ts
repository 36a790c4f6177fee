/**
 * Two builds of the service, compared on bench:api's targets by CPU per request (the figure a loaded
 * machine disturbs least): both servers run side by side on one Redis, each with the 50 firewalls,
 * and each round measures every target on one build and then the other (the first alternating by
 * round), so that a change of the machine's load falls on both alike. Prints the median CPU per
 * request of each target and its ratio to `/healthz`'s, with every round's figure. Asserts nothing.
 *   BENCH_BASELINE=/path/to/other/.output/server/index.mjs npm run bench:api-ab
 * ROUNDS (default 4), DURATION (seconds per measurement, default 5); the other build is this
 * worktree's `.output` (build it first: `npm run build`, or `node scripts/ensure-build.mjs`).
 */
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import autocannon from 'autocannon'
import { SERVER_ENTRY, startServer, type RunningServer } from '../test/support/server'
import { createBenchFirewalls } from './support/api-firewalls'
import { redisUrl, uniquePrefix } from '../test/support/redis'
import { median } from './support/median'

const BASELINE = process.env.BENCH_BASELINE
const ROUNDS = Number(process.env.ROUNDS ?? 4)
const DURATION = Number(process.env.DURATION ?? 5)
const CONNECTIONS = 50
const TOKEN = 'fwp_benchmarkToken00000000000000000000000001'
const auth = { authorization: `Bearer ${TOKEN}` }
const TARGETS = [
  ['GET /healthz', '/healthz', {}],
  ['GET /v1/{ns}/config', '/v1/default/config', auth],
  ['GET /v1/{ns}/config/{fw}', '/v1/default/config/fw-7', auth],
] as const

/** CPU seconds a process used so far (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** A server of `entry` with bench:api's 50 firewalls. */
async function serverWithFirewalls(entry: string, redis: string): Promise<RunningServer> {
  const env = { REDIS_URL: redis, REDIS_PREFIX: uniquePrefix('ab'), BOOTSTRAP_TOKEN: TOKEN, LOG_LEVEL: 'error' }
  const server = await startServer({ ...env, API_RATE_LIMIT: 'off' }, { entry })
  await createBenchFirewalls(server.url, TOKEN)
  return server
}

/** CPU µs per request of one measurement (after a 1 s warm-up). */
async function cpuPerRequest(server: RunningServer, path: string, headers: Record<string, string>): Promise<number> {
  const url = server.url + path
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers })
  const before = cpuSeconds(server.process.pid!)
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers })
  if (result.errors || result.non2xx) throw new Error(`${path}: ${result.errors} errors, ${result.non2xx} non-2xx`)
  return ((cpuSeconds(server.process.pid!) - before) / result.requests.total) * 1e6
}

async function main() {
  if (!BASELINE) throw new Error('BENCH_BASELINE names the other build (its .output/server/index.mjs)')
  const redis = await redisUrl()
  const builds = { baseline: BASELINE, this: SERVER_ENTRY }
  const servers = {
    baseline: await serverWithFirewalls(builds.baseline, redis),
    this: await serverWithFirewalls(builds.this, redis),
  }
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')
  try {
    const loadBefore = load()
    const figures = new Map<string, number[]>()
    for (let round = 0; round < ROUNDS; round++)
      for (const [name, path, headers] of TARGETS)
        for (const build of round % 2 ? (['this', 'baseline'] as const) : (['baseline', 'this'] as const)) {
          const key = `${build} ${name}`
          figures.set(key, [...(figures.get(key) ?? []), await cpuPerRequest(servers[build], path, headers)])
        }
    console.log(
      `\nAPI A/B: ${ROUNDS} rounds, ${DURATION}s per measurement, ${CONNECTIONS} connections, load average ${loadBefore} -> ${load()}\n`,
    )
    for (const build of ['baseline', 'this'] as const) {
      console.log(`${build}: ${builds[build]}`)
      const healthz = median(figures.get(`${build} ${TARGETS[0][0]}`)!)
      for (const [name] of TARGETS) {
        const all = figures.get(`${build} ${name}`)!
        console.log(
          `  ${name.padEnd(26)} CPU ${median(all).toFixed(0).padStart(4)} µs/req   x /healthz ${(median(all) / healthz).toFixed(2)}   rounds ${all.map((us) => us.toFixed(0)).join(' ')}`,
        )
      }
    }
  } finally {
    await Promise.all([servers.baseline.stop(), servers.this.stop()])
  }
}

main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
