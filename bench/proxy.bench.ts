/**
 * Registry proxy benchmark, one run against one local Verdaccio:
 *  - packument and tarball latency p50/p99, direct vs through the firewall (cached upstream);
 *  - `npm install` wall time of a 32-package tree, direct vs through the firewall: cold (empty
 *    npm cache, empty firewall cache), firewall-warm (empty npm cache, firewall cache warm) and
 *    both-warm (npm cache reused, --prefer-online revalidates every packument). Each round runs
 *    the direct and the firewall install of a phase back to back, the first alternating by round;
 *    the ratio printed is the median of the rounds' ratios, beside the serving side's CPU.
 * Prints figures, asserts nothing.   npm run bench:proxy   (ROUNDS=5 SAMPLES=300 PACKAGES=32)
 * LATENCY_ONLY=1 stops after the request figures. PROFILE=/tmp/warm.cpuprofile adds a CPU profile of the firewall over three warm installs.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { benchTree } from '../test/fixtures/npm-packages'
import { startVerdaccio } from '../test/support/verdaccio'
import { npmClient, publishFixtures, type NpmClient } from '../test/registry/npm-cli'
import { startProxy } from '../test/registry/harness'
import { profiled } from './support/cpu-profile'
import { median } from './support/median'

const ROUNDS = Number(process.env.ROUNDS ?? 5)
const SAMPLES = Number(process.env.SAMPLES ?? 300)
const LATENCY_ONLY = process.env.LATENCY_ONLY === '1'
const PACKAGES = Math.max(30, Number(process.env.PACKAGES ?? 32))
process.env.LOG_LEVEL ??= 'error'

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
const ms = (value: number) => `${value.toFixed(2)} ms`

interface Latency {
  p50: number
  p99: number
  /** CPU per request of this process (the client, and the firewall when it is in the path) and of Verdaccio, µs. */
  ownCpuUs: number
  registryCpuUs: number
}

async function latency(url: string, headers: Record<string, string>): Promise<Latency> {
  for (let i = 0; i < 100; i++) await (await fetch(url, { headers })).arrayBuffer() // warm-up
  const times: number[] = []
  const [ownBefore, registryBefore] = [processCpuMs(process.pid), processCpuMs(registryPid)]
  for (let i = 0; i < SAMPLES; i++) {
    const start = performance.now()
    const response = await fetch(url, { headers })
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${url}: ${response.status}`)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    ownCpuUs: ((processCpuMs(process.pid) - ownBefore) * 1000) / SAMPLES,
    registryCpuUs: ((processCpuMs(registryPid) - registryBefore) * 1000) / SAMPLES,
  }
}

/** CPU time (user + system) a process has used so far, from /proc (clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

interface Run {
  wallMs: number
  /** CPU the serving side used during the install: Verdaccio, plus this process (the firewall; npm's spawning on both sides). */
  serverCpuMs: number
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

let registryPid = 0

async function measured(client: NpmClient, keepCache: boolean): Promise<Run> {
  const before = processCpuMs(registryPid) + processCpuMs(process.pid)
  const wallMs = await install(client, keepCache)
  return { wallMs, serverCpuMs: processCpuMs(registryPid) + processCpuMs(process.pid) - before }
}

async function main() {
  const registry = await startVerdaccio()
  registryPid = registry.pid
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
    // Direct, firewall, direct again: the client's own CPU per request is the mean of the two direct rows.
    const sides = async (direct: () => Promise<Latency>, firewall: () => Promise<Latency>) => {
      const [before, via, after] = [await direct(), await firewall(), await direct()]
      const merged = { ...before, ownCpuUs: (before.ownCpuUs + after.ownCpuUs) / 2 }
      merged.registryCpuUs = (before.registryCpuUs + after.registryCpuUs) / 2
      return [merged, via]
    }
    const packuments = await sides(
      () => latency(`${registry.url}/bench-root`, { ...upstreamAuth, ...corgi }),
      () => latency(`${proxy.registryUrl('bench')}bench-root`, { ...auth, ...corgi }),
    )
    const tarballs = await sides(
      () => latency(`${registry.url}/${tarball}`, upstreamAuth),
      () => latency(`${proxy.registryUrl('bench')}${tarball}`, auth),
    )
    const rows: [string, Latency][] = [
      ['packument direct', packuments[0]],
      ['packument via firewall', packuments[1]],
      ['tarball direct', tarballs[0]],
      ['tarball via firewall', tarballs[1]],
    ]
    console.log(`\nlatency over ${SAMPLES} sequential requests (firewall upstream cached: true)`)
    for (const [label, { p50, p99, ownCpuUs, registryCpuUs }] of rows)
      console.log(
        `  ${label.padEnd(24)} p50 ${ms(p50).padStart(10)}   p99 ${ms(p99).padStart(10)}` +
          `   CPU/request: this process ${ownCpuUs.toFixed(0).padStart(5)} µs, Verdaccio ${registryCpuUs.toFixed(0).padStart(5)} µs`,
      )
    console.log(
      `  added p50: packument ${ms(rows[1][1].p50 - rows[0][1].p50)}, tarball ${ms(rows[3][1].p50 - rows[2][1].p50)}` +
        `\n  serving CPU/request (this process's CPU beyond the client's in the direct row): packument` +
        ` ${(rows[1][1].ownCpuUs - rows[0][1].ownCpuUs).toFixed(0)} µs against Verdaccio's ${rows[0][1].registryCpuUs.toFixed(0)} µs,` +
        ` tarball ${(rows[3][1].ownCpuUs - rows[2][1].ownCpuUs).toFixed(0)} µs against ${rows[2][1].registryCpuUs.toFixed(0)} µs`,
    )

    if (LATENCY_ONLY) return
    const direct = npmClient(registry.url, registry.token)
    const phases = [
      { label: 'cold (empty npm + firewall cache)', keepCache: false },
      { label: 'firewall cache warm, npm cache empty', keepCache: false },
      { label: 'both caches warm (--prefer-online)', keepCache: true },
    ]
    const runs = phases.map(() => [] as { direct: Run; firewall: Run }[])
    for (let round = 0; round < ROUNDS; round++) {
      // A new firewall id is a new cache scope: its packument cache starts empty.
      const cold = `bench-cold-${round}`
      await firewall(cold)
      const via = npmClient(proxy.registryUrl(cold), token)
      for (const [i, { keepCache }] of phases.entries()) {
        // Direct and firewall one after the other, the first of the pair alternating by round,
        // so a change in the machine's load falls on both sides alike.
        const pair = { direct: () => measured(direct, keepCache), firewall: () => measured(via, keepCache) }
        if (round % 2 === 0) {
          const d = await pair.direct()
          runs[i].push({ direct: d, firewall: await pair.firewall() })
        } else {
          const f = await pair.firewall()
          runs[i].push({ direct: await pair.direct(), firewall: f })
        }
      }
    }
    console.log(
      `\nnpm install of ${PACKAGES} packages, ${ROUNDS} rounds of interleaved pairs (first of a pair alternating):` +
        `\nwall time medians, the median of the rounds' ratios, and the serving processes' CPU per install` +
        `\n(Verdaccio + this process: the firewall, and on both sides this process's spawning of npm)`,
    )
    for (const [i, { label }] of phases.entries()) {
      const ratios = runs[i].map((pair) => pair.firewall.wallMs / pair.direct.wallMs)
      const wall = (side: 'direct' | 'firewall') => median(runs[i].map((pair) => pair[side].wallMs))
      const cpu = (side: 'direct' | 'firewall') => median(runs[i].map((pair) => pair[side].serverCpuMs))
      console.log(
        `  ${label.padEnd(38)} direct ${ms(wall('direct')).padStart(11)}   firewall ${ms(wall('firewall')).padStart(11)}` +
          `   ratio ${median(ratios).toFixed(2)}x (rounds ${ratios.map((r) => r.toFixed(2)).join(' ')})` +
          `   server CPU ${cpu('direct').toFixed(0)} / ${cpu('firewall').toFixed(0)} ms`,
      )
    }

    if (process.env.PROFILE) {
      // The firewall runs in this process: profile it over warm installs alone.
      const via = npmClient(proxy.registryUrl('bench-cold-0'), token)
      await install(via, false)
      const { top } = await profiled(process.env.PROFILE, async () => {
        for (let i = 0; i < 3; i++) await install(via, false)
      })
      console.log(`\nprofile of 3 firewall-warm installs written to ${process.env.PROFILE}\n  ${top.join('\n  ')}`)
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
