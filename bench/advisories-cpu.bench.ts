/**
 * The request thread's share of one feed refresh (npm run bench:advisories-cpu, RECORDS=200000):
 * a synthetic all.zip of RECORDS records is served from a thread of its own (its CPU is not
 * counted), loaded once, then republished with one more record and refreshed. Prints the CPU time
 * (from /proc, schedstat) the main thread spent during that refresh, beside its wall time.
 * LOADER=inline: the archive is read on the main thread (the build without a loader thread);
 * PROFILE=file.cpuprofile: the refresh is profiled too.
 * Linux only (per-thread CPU time). Prints figures, asserts nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { LocalBackend } from '../storage'
import { AdvisoryFeedRepository } from '../storage/repositories/advisory-feed'
import { LeaseRepository } from '../storage/repositories/leases'
import { threadLoader } from '../server/advisories/archive-loader'
import { BUILT_LOADER } from './support/built-loader'
import { AdvisoryFeed, servicePace } from '../server/advisories/feed-worker'
import { profiled } from './support/cpu-profile'
import { syntheticZip } from './support/synthetic-osv'
import { startBucketThread } from './support/osv-bucket-thread'

const RECORDS = Number(process.env.RECORDS ?? 200_000)
process.env.LOG_LEVEL ??= 'error'

/** Builds (or reuses, from /tmp) the archive of `count` records. */
function archive(count: number): string {
  const path = `/tmp/advisories-cpu-${count}.zip`
  if (!existsSync(path)) writeFileSync(path, syntheticZip(count))
  return path
}

/** CPU time of the main thread in ms (its task's schedstat: nanoseconds on a CPU). */
function mainThreadCpuMs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
}

async function main() {
  const before = archive(RECORDS)
  const after = archive(RECORDS + 1)
  // The OSV bucket on a thread of its own: serving 63 MB must not count as the request thread's work.
  const bucket = await startBucketThread()
  const publish = (path: string) => bucket.publish('npm', readFileSync(path))
  await publish(before)

  const backend = new LocalBackend(undefined)
  const loader = process.env.LOADER === 'inline' ? undefined : (threadLoader({ entry: BUILT_LOADER }) ?? undefined)
  const feed = new AdvisoryFeed({
    repository: new AdvisoryFeedRepository(backend),
    lease: (ecosystem) => new LeaseRepository(backend).advisoryFeed(ecosystem),
    settings: { url: bucket.url, refreshMs: 3_600_000, refresh: '1h' },
    clock: { now: () => Date.now() },
    owner: 'bench',
    ecosystemsInUse: async () => ['npm'],
    pace: servicePace,
    loader,
  })
  console.log(`${RECORDS}-record feed, read ${loader ? 'on the loader thread' : 'on the main thread'}`)
  // PROFILE=file.cpuprofile: the refresh is also sampled by V8's profiler, its busiest functions printed.
  const refresh = async () => {
    if (!process.env.PROFILE) return feed.sync(['npm'])
    const { result, top } = await profiled(process.env.PROFILE, () => feed.sync(['npm']))
    profile = top
    return result
  }
  let profile: string[] = []
  const rows: [string, () => Promise<unknown>][] = [
    ['first load (every entry read)', () => feed.sync(['npm'])],
    ['refresh, one record added', async () => (await publish(after), await refresh())],
    ['refresh answered 304', () => feed.sync(['npm'])],
  ]
  for (const [label, run] of rows) {
    const cpu = mainThreadCpuMs()
    const start = performance.now()
    const [report] = (await run()) as { outcome: string; reused?: number }[]
    const wall = performance.now() - start
    const used = mainThreadCpuMs() - cpu
    console.log(
      `  ${label.padEnd(32)} ${report.outcome.padEnd(9)} main thread CPU ${used.toFixed(1).padStart(6)} ms   wall ${wall.toFixed(0).padStart(6)} ms`,
    )
  }
  if (profile.length)
    console.log(`\nmain thread during the refresh (V8 profile, ${process.env.PROFILE}):\n  ${profile.join('\n  ')}`)
  await feed.stop()
  await bucket.close()
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
