/**
 * Advisory feed benchmark, npm run bench:advisories (RECORDS=200000 ROUNDS=3 PACKAGES=32):
 *  - a synthetic OSV npm feed of RECORDS records (three quarters MAL- reports, a quarter GHSA
 *    advisories with ranges and CVSS) served by a local bucket on a thread of its own: download + load time, heap and RSS
 *    growth, snapshot size and the time another process takes to load the stored snapshot, a
 *    refresh with one record more (by ranges) and the time the other process takes to follow it,
 *    and lookup latency p50/p99;
 *  - the swap of a refreshed feed (one more record) while `npm install` runs through a firewall with
 *    vulnerability and malware rules (Verdaccio upstream): the latency of a probe request (a tarball
 *    through the firewall, every 5 ms) and npm install wall time, without a swap, during one, and
 *    during one with the loader thread at normal priority; ROUNDS rounds of the three, interleaved.
 * PROFILE=file.cpuprofile: the request thread is profiled during the first swap.
 * Prints figures, asserts nothing.
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { LocalBackend } from '../storage'
import { AdvisoryFeedRepository } from '../storage/repositories/advisory-feed'
import { LeaseRepository } from '../storage/repositories/leases'
import { AdvisoryFeed, servicePace, type AdvisoryFeedOptions } from '../server/advisories/feed-worker'
import { threadLoader } from '../server/advisories/archive-loader'
import { BUILT_LOADER } from './support/built-loader'
import type { PackedAdvisoryIndex } from '../server/advisories/packed-index'
import { createAdvisoryCatalog } from '../server/advisories/catalog'
import type { AdvisoryFeedSettings } from '../server/advisories/settings'
import { benchTree } from '../test/fixtures/npm-packages'
import { startBucketThread, type BucketThread } from './support/osv-bucket-thread'
import { syntheticZip } from './support/synthetic-osv'
import { startVerdaccio } from '../test/support/verdaccio'
import { npmClient, publishFixtures, type NpmClient } from '../test/registry/npm-cli'
import { startProxy } from '../test/registry/harness'
import { watchLoop, type LoopFigures } from './support/loop-watch'
import { profiled } from './support/cpu-profile'
import { probe } from './support/latency-probe'
import { median } from './support/median'

const RECORDS = Number(process.env.RECORDS ?? 200_000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const PACKAGES = Math.max(30, Number(process.env.PACKAGES ?? 32))
const LOOKUPS = 200_000
process.env.LOG_LEVEL ??= 'error'

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const ms = (value: number) => `${value.toFixed(2)} ms`
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
const gc = () => (globalThis as { gc?: () => void }).gc?.()
// As the service loads: on a worker thread (LOADER=inline: on the request thread, in 2 ms slices).
const loader = process.env.LOADER === 'inline' ? undefined : (threadLoader({ entry: BUILT_LOADER }) ?? undefined)

async function install(client: NpmClient): Promise<number> {
  await rm(join(client.dir, 'node_modules'), { recursive: true, force: true })
  await rm(join(client.dir, 'package-lock.json'), { force: true })
  await rm(join(client.dir, '.cache'), { recursive: true, force: true })
  const start = performance.now()
  const result = await client.npm(['install', 'bench-root', '--ignore-scripts', '--no-save'])
  if (result.code !== 0) throw new Error(result.output)
  return performance.now() - start
}

async function loadFigures(feed: BucketThread, settings: AdvisoryFeedSettings) {
  const feedUrl = feed.url
  console.log(
    `\nsynthetic OSV npm feed: ${RECORDS} records, loaded ${loader ? 'on a worker thread' : 'on the request thread'}`,
  )
  gc()
  const before = process.memoryUsage()
  const backend = new LocalBackend(undefined)
  const worker = new AdvisoryFeed({
    repository: new AdvisoryFeedRepository(backend),
    lease: (ecosystem) => new LeaseRepository(backend).advisoryFeed(ecosystem),
    settings: { ...settings, url: feedUrl },
    clock: { now: () => Date.now() },
    owner: 'bench',
    ecosystemsInUse: async () => ['npm'],
    pace: servicePace,
    loader,
  })
  let start = performance.now()
  const [report] = await worker.sync(['npm'])
  const loadMs = performance.now() - start
  gc()
  const after = process.memoryUsage()
  const heap = after.heapUsed - before.heapUsed
  const rss = after.rss - before.rss
  const state = await new AdvisoryFeedRepository(backend).state('npm')
  const snapshot = await new AdvisoryFeedRepository(backend).snapshot('npm', state!.snapshotId!)
  console.log(
    `  download + load + index + snapshot    ${ms(loadMs).padStart(12)}   (${report.records} records, ${report.invalid} invalid)`,
  )
  const packed = worker.index('npm') as PackedAdvisoryIndex
  console.log(
    `  index held: ${mb(packed.bytes)} of buffers outside the JS heap; JS heap grew ${mb(heap)} (RSS ${mb(rss)})`,
  )
  console.log(`  stored snapshot (compressed)          ${mb(snapshot!.length).padStart(12)}`)

  const other = new AdvisoryFeed({
    repository: new AdvisoryFeedRepository(backend),
    lease: (ecosystem) => new LeaseRepository(backend).advisoryFeed(ecosystem),
    settings: { ...settings, url: null },
    clock: { now: () => Date.now() },
    owner: 'bench-other',
    ecosystemsInUse: async () => ['npm'],
    pace: servicePace,
    loader,
  })
  start = performance.now()
  await other.loadStored()
  console.log(`  another process loads the snapshot    ${ms(performance.now() - start).padStart(12)}`)
  // One record more: the refresh by ranges here, then the other process follows the new snapshot.
  await feed.publish('npm', syntheticZip(RECORDS + 1))
  gc()
  start = performance.now()
  const [refresh] = await worker.sync(['npm'])
  const refreshMs = performance.now() - start
  console.log(
    `  refresh, one record added             ${ms(refreshMs).padStart(12)}   (${refresh.ranges} ranges, ${refresh.reused} entries reused)`,
  )
  start = performance.now()
  await other.runPass()
  console.log(`  another process follows that refresh  ${ms(performance.now() - start).padStart(12)}`)
  await other.stop()

  const index = worker.index('npm')!
  const times: number[] = []
  let hits = 0
  for (let n = 0; n < LOOKUPS; n++) {
    const i = (n * 7919) % (RECORDS * 2) // about half of the names have no record
    const name = i % 7 === 0 ? `@scope-${i % 997}/pkg-${i}` : `pkg-${i}`
    const t = performance.now()
    const found = index.lookup('npm', name, '1.0.1')
    times.push(performance.now() - t)
    if (found.malware.length + found.vulnerabilities.length > 0) hits++
  }
  times.sort((a, b) => a - b)
  console.log(
    `  lookup (${LOOKUPS}, ${hits} hits)          p50 ${ms(percentile(times, 50))}   p99 ${ms(percentile(times, 99))}   max ${ms(times.at(-1)!)}`,
  )
  await worker.stop()
}

async function main() {
  console.log(`building a ${RECORDS}-record all.zip ...`)
  const feed = await startBucketThread()
  await feed.publish('npm', syntheticZip(RECORDS))
  const settings: AdvisoryFeedSettings = { url: feed.url, refreshMs: 3_600_000, refresh: '1h' }
  gc() // the records built for the zip are gone before anything is measured
  await loadFigures(feed, settings)

  const registry = await startVerdaccio()
  const catalog = createAdvisoryCatalog({ settings })
  const proxy = await startProxy({ backend: 'fs', advisories: () => catalog.current() })
  try {
    // Kept by reference: the comparison rounds swap the loader between refreshes.
    const options: AdvisoryFeedOptions = {
      repository: new AdvisoryFeedRepository(proxy.backend),
      lease: (ecosystem) => new LeaseRepository(proxy.backend).advisoryFeed(ecosystem),
      settings,
      clock: { now: () => Date.now() },
      owner: 'bench-proxy',
      ecosystemsInUse: async () => ['npm'],
      pace: servicePace,
      loader,
    }
    const worker = new AdvisoryFeed(options)
    await catalog.attach(proxy.services, { feed: worker })
    await worker.sync(['npm'])
    console.log(`\npublishing ${PACKAGES} fixture packages to Verdaccio ...`)
    await publishFixtures(registry.url, registry.token, benchTree(PACKAGES), 8)
    const token = await proxy.token('owner')
    await proxy.putFirewall('bench', {
      upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token }, cached: true }],
      rules: [
        {
          id: 'malware',
          executionPhase: 'download',
          selector: { function: { name: 'malware' } },
          description: 'bench',
        },
        {
          id: 'vuln',
          executionPhase: 'download',
          selector: { function: { name: 'vulnerability', minSeverity: 'high' } },
          description: 'bench',
        },
      ],
    })
    const client = npmClient(proxy.registryUrl('bench'), token)
    const probeUrl = `${proxy.registryUrl('bench')}bench-pkg-1/-/bench-pkg-1-1.0.0.tgz`
    const probeHeaders = { authorization: `Bearer ${token}` }
    await install(client) // warm the firewall cache and the JIT

    // Phases interleaved, so that the load of a shared machine, which changes by the minute, falls
    // on each kind alike: no swap, a swap as the service runs it, and (on a loader thread) a swap
    // with the loader at normal priority, to show what the low priority is worth.
    const kinds = loader ? (['quiet', 'swap', 'swap-normal'] as const) : (['quiet', 'swap'] as const)
    type Kind = (typeof kinds)[number]
    const times = new Map<Kind, number[]>(kinds.map((kind) => [kind, []]))
    const installs = new Map<Kind, number[]>(kinds.map((kind) => [kind, []]))
    const swaps = new Map<Kind, number[]>(kinds.map((kind) => [kind, []]))
    const loops = new Map<Kind, LoopFigures[]>(kinds.map((kind) => [kind, []]))
    // Every refreshed archive is built before the rounds: building one makes 200,000 records of
    // garbage on this thread, which is the proxy's, and its collection is no part of a swap.
    let published = RECORDS + 1 // loadFigures published one refresh
    const refreshed = Array.from({ length: ROUNDS * (kinds.length - 1) }, () => syntheticZip(++published))
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of kinds) {
        let swapMs = 0
        let swap: Promise<unknown> = Promise.resolve()
        if (kind !== 'quiet') {
          options.loader =
            kind === 'swap' ? loader : (threadLoader({ lowPriority: false, entry: BUILT_LOADER }) ?? undefined)
          await feed.publish('npm', refreshed.shift()!)
        }
        // Each phase starts alike: garbage collected, the machine settled.
        gc()
        await new Promise((resolve) => setTimeout(resolve, 1000))
        const running = probe(probeUrl, probeHeaders)
        const watch = watchLoop()
        const start = performance.now()
        const phase = async () => {
          if (kind !== 'quiet') swap = worker.sync(['npm']).then(() => (swapMs = performance.now() - start))
          do installs.get(kind)!.push(await install(client))
          while (kind !== 'quiet' && swapMs === 0)
          await swap
        }
        // PROFILE=file.cpuprofile: this thread (the proxy's) is sampled during the first swap.
        if (process.env.PROFILE && kind === 'swap' && round === 0) {
          const { top } = await profiled(process.env.PROFILE, phase)
          console.log(
            `  this thread during the first swap (V8 profile, ${process.env.PROFILE}):\n    ${top.join('\n    ')}`,
          )
        } else await phase()
        if (swapMs) swaps.get(kind)!.push(swapMs)
        loops.get(kind)!.push(watch.stop())
        times.get(kind)!.push(...(await running.stop()))
      }
    }
    const label: Record<Kind, string> = {
      quiet: 'no swap',
      swap: 'during swap',
      'swap-normal': 'swap, loader at normal priority',
    }
    console.log(
      `\nrefreshed feed (${published} records) swapped in while npm install (${PACKAGES} packages) runs through the firewall, ${ROUNDS} rounds`,
    )
    const quiet = times.get('quiet')!.sort((a, b) => a - b)
    for (const kind of kinds) {
      const sorted = times.get(kind)!.sort((a, b) => a - b)
      const slowed =
        kind === 'quiet'
          ? ''
          : `  (p99 ${percentile(sorted, 99) >= percentile(quiet, 99) ? '+' : ''}${ms(percentile(sorted, 99) - percentile(quiet, 99))})`
      console.log(
        `  probe tarball latency, ${label[kind].padEnd(32)} n=${sorted.length}  p50 ${ms(percentile(sorted, 50))}  p99 ${ms(percentile(sorted, 99))}  max ${ms(sorted.at(-1)!)}${slowed}`,
      )
    }
    for (const kind of kinds) {
      const refresh = kind === 'quiet' ? '' : `, refresh median ${ms(median(swaps.get(kind)!))}`
      console.log(
        `  npm install median, ${label[kind].padEnd(32)} ${ms(median(installs.get(kind)!))} (${installs.get(kind)!.length} runs)${refresh}`,
      )
    }
    // The proxy runs on this thread: a probe slowed here by a long task or a GC pause shows in these.
    for (const kind of kinds) {
      const rounds = loops.get(kind)!
      const most = (pick: (f: LoopFigures) => number) => ms(Math.max(...rounds.map(pick)))
      const sum = (pick: (f: LoopFigures) => number) => rounds.reduce((total, f) => total + pick(f), 0)
      console.log(
        `  request thread, ${label[kind].padEnd(32)} loop delay p99 ${most((f) => f.delayP99Ms)} max ${most((f) => f.delayMaxMs)}   GC ${sum((f) => f.gcPauses)} pauses, max ${most((f) => f.gcMaxMs)}, total ${ms(sum((f) => f.gcTotalMs))}`,
      )
    }
    await worker.stop()
  } finally {
    await catalog.close()
    await proxy.close()
    await registry.stop()
    await feed.close()
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
