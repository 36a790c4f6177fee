/**
 * API benchmark: the built server on loopback with 50 firewalls in Redis, 50 connections.
 * Prints requests/s and latency percentiles for the authenticated list and get, and their
 * ratio to unauthenticated /healthz measured in the same run. Asserts nothing.
 *   npm run bench:api            (builds first if needed; DURATION=10 seconds per target)
 */
import autocannon from 'autocannon'
import { apiClient, startServer } from '../test/support/server'
import { redisUrl, uniquePrefix } from '../test/support/redis'

const DURATION = Number(process.env.DURATION ?? 10)
const CONNECTIONS = 50
const TOKEN = 'fwp_benchmarkToken00000000000000000000000001'

async function load(url: string, headers: Record<string, string> = {}) {
  // Warm-up so JIT and connection set-up do not count.
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers })
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers })
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  }
}

async function main() {
  const server = await startServer({
    REDIS_URL: await redisUrl(),
    REDIS_PREFIX: uniquePrefix('bench'),
    BOOTSTRAP_TOKEN: TOKEN,
    LOG_LEVEL: 'error',
    API_RATE_LIMIT: 'off',
  })
  try {
    const api = apiClient(server.url, TOKEN)
    for (let i = 0; i < 50; i++) {
      const res = await api('PUT', `/v1/default/config/fw-${i}`, {
        upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org', credentials: { token: 'bench-secret' } }],
        rules: Array.from({ length: 5 }, (_, r) => ({
          id: `r${r}`,
          executionPhase: 'download',
          selector: { function: { name: 'packageName', patterns: [`bad-${r}-*`] } },
          description: 'bench rule',
        })),
      })
      if (res.status !== 201) throw new Error(`setup failed: ${res.status}`)
    }
    const auth = { authorization: `Bearer ${TOKEN}` }
    const healthz = await load(`${server.url}/healthz`)
    const list = await load(`${server.url}/v1/default/config`, auth)
    const get = await load(`${server.url}/v1/default/config/fw-7`, auth)
    const row = (name: string, r: typeof healthz) =>
      `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   ratio ${(r.rps / healthz.rps).toFixed(2)}   errors ${r.errors}`
    console.log(`\nAPI benchmark: ${CONNECTIONS} connections, ${DURATION}s per target, 50 firewalls in Redis\n`)
    console.log(row('GET /healthz (baseline)', healthz))
    console.log(row('GET /v1/{ns}/config', list))
    console.log(row('GET /v1/{ns}/config/{fw}', get))
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met')
    // Goals of issue #27.
    console.log(
      `\ngoal: list >= 0.60 of /healthz rate (${met(list.rps / healthz.rps >= 0.6)}), list p99 < 20 ms (${met(list.p99 < 20)}), get >= 0.70 (${met(get.rps / healthz.rps >= 0.7)})`,
    )
  } finally {
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
