/**
 * Registry proxy benchmark, one run against one local Verdaccio:
 *  - packument and tarball latency p50/p99, direct vs through the firewall (cached upstream);
 *  - `npm install` wall time of a 32-package tree, direct vs through the firewall: cold (empty
 *    npm cache, empty firewall cache), firewall-warm (empty npm cache, firewall cache warm) and
 *    both-warm (npm cache reused, --prefer-online revalidates every packument).
 * Prints figures, asserts nothing.   npm run bench:proxy   (ROUNDS=3 SAMPLES=300 PACKAGES=32)
 */
import { mkdtempSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { benchTree } from '../test/fixtures/npm-packages'
import { startVerdaccio } from '../test/support/verdaccio'
import { npmClient, publishFixtures, type NpmClient } from '../test/registry/npm-cli'
import { startProxy } from '../test/registry/harness'

const ROUNDS = Number(process.env.ROUNDS ?? 3)
const SAMPLES = Number(process.env.SAMPLES ?? 300)
const PACKAGES = Math.max(30, Number(process.env.PACKAGES ?? 32))
process.env.LOG_LEVEL ??= 'error'

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const ms = (value: number) => `${value.toFixed(2)} ms`

async function latency(url: string, headers: Record<string, string>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 20; i++) await (await fetch(url, { headers })).arrayBuffer() // warm-up
  const times: number[] = []
  for (let i = 0; i < SAMPLES; i++) {
    const start = performance.now()
    const response = await fetch(url, { headers })
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${url}: ${response.status}`)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p99: percentile(times, 99) }
}

/** One `npm install bench-root` in a fresh project; `client` decides registry and cache. */
async function install(client: NpmClient, keepCache: boolean): Promise<number> {
  await rm(join(client.dir, 'node_modules'), { recursive: true, force: true })
  await rm(join(client.dir, 'package-lock.json'), { force: true })
  if (!keepCache) await rm(join(client.dir, '.cache'), { recursive: true, force: true })
  const start = performance.now()
  const result = await client.npm(['install', 'bench-root', '--ignore-scripts', '--no-save'])
  const elapsed = performance.now() - start
  if (result.code !== 0) throw new Error(result.output)
  return elapsed
}

async function main() {
  const registry = await startVerdaccio()
  const proxy = await startProxy({ backend: 'fs', advisoryDir: mkdtempSync(join(tmpdir(), 'pf-bench-adv-')) })
  try {
    console.log(`publishing ${PACKAGES} fixture packages to Verdaccio ...`)
    await publishFixtures(registry.url, registry.token, benchTree(PACKAGES), 8)
    const token = await proxy.token('owner')
    const firewall = (id: string) =>
      proxy.putFirewall(id, {
        upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token }, cached: true }],
        rules: [
          {
            id: 'no-evil',
            executionPhase: 'download',
            selector: { function: { name: 'packageName', patterns: ['evil-*', '@evil/*'] } },
            description: 'bench',
          },
          {
            id: 'vuln',
            executionPhase: 'download',
            selector: { function: { name: 'vulnerability', minSeverity: 'high' } },
            description: 'bench',
          },
          {
            id: 'age',
            executionPhase: 'versions',
            selector: { function: { name: 'minimumAge', duration: '1ms' } },
            description: 'bench',
          },
        ],
      })
    await firewall('bench')

    const auth = { authorization: `Bearer ${token}` }
    const upstreamAuth = { authorization: `Bearer ${registry.token}` }
    const corgi = { accept: 'application/vnd.npm.install-v1+json' }
    const tarball = 'bench-pkg-0/-/bench-pkg-0-1.0.0.tgz'
    const rows: [string, { p50: number; p99: number }][] = [
      ['packument direct', await latency(`${registry.url}/bench-root`, { ...upstreamAuth, ...corgi })],
      ['packument via firewall', await latency(`${proxy.registryUrl('bench')}bench-root`, { ...auth, ...corgi })],
      ['tarball direct', await latency(`${registry.url}/${tarball}`, upstreamAuth)],
      ['tarball via firewall', await latency(`${proxy.registryUrl('bench')}${tarball}`, auth)],
    ]
    console.log(`\nlatency over ${SAMPLES} sequential requests (firewall upstream cached: true)`)
    for (const [label, { p50, p99 }] of rows)
      console.log(`  ${label.padEnd(24)} p50 ${ms(p50).padStart(10)}   p99 ${ms(p99).padStart(10)}`)
    console.log(
      `  added p50: packument ${ms(rows[1][1].p50 - rows[0][1].p50)}, tarball ${ms(rows[3][1].p50 - rows[2][1].p50)}`,
    )

    const direct = npmClient(registry.url, registry.token)
    const times: Record<string, number[]> = {
      directCold: [],
      proxyCold: [],
      directWarm: [],
      proxyWarm: [],
      directBoth: [],
      proxyBoth: [],
    }
    for (let round = 0; round < ROUNDS; round++) {
      // A new firewall id is a new cache scope: its packument cache starts empty.
      const cold = `bench-cold-${round}`
      await firewall(cold)
      const viaCold = npmClient(proxy.registryUrl(cold), token)
      times.directCold.push(await install(direct, false))
      times.proxyCold.push(await install(viaCold, false))
      times.directWarm.push(await install(direct, false))
      times.proxyWarm.push(await install(viaCold, false))
      times.directBoth.push(await install(direct, true))
      times.proxyBoth.push(await install(viaCold, true))
    }
    console.log(`\nnpm install of ${PACKAGES} packages, median of ${ROUNDS} rounds`)
    const pairs: [string, string, string][] = [
      ['cold (empty npm + firewall cache)', 'directCold', 'proxyCold'],
      ['firewall cache warm, npm cache empty', 'directWarm', 'proxyWarm'],
      ['both caches warm (--prefer-online)', 'directBoth', 'proxyBoth'],
    ]
    for (const [label, d, p] of pairs) {
      const [dm, pm] = [median(times[d]), median(times[p])]
      console.log(
        `  ${label.padEnd(38)} direct ${ms(dm).padStart(11)}   firewall ${ms(pm).padStart(11)}   ratio ${(pm / dm).toFixed(2)}x`,
      )
    }
  } finally {
    await proxy.close()
    await registry.stop()
  }
}

main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
