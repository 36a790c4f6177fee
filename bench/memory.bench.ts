/**
 * Retained memory under a steady mixed load (#30): the built server, one process on Redis, with
 * the retained-heap probe preloaded (scripts/memory/probe.mjs: a full GC, then the heap still in use),
 * for `--minutes` (default 10) of:
 * - registry installs through a firewall against a local Verdaccio (packument, then tarball, as npm
 *   does; an allowed, a log-only and a blocked package);
 * - API writes (rule upserts and deletes, team creations and deletions);
 * - deliveries of every event to 20 webhooks at a local receiver;
 * - dashboard live streams (SSE) open on the webhooks for the whole run.
 * Prints retained heap and RSS each minute, then the retained-heap slope after the warm-up (least
 * squares over every 10 s reading). Asserts nothing.
 *   npm run bench:memory                  (builds first when the build is stale)
 *   npm run bench:memory -- --minutes 3
 *   npm run bench:memory -- --snapshots /tmp/snaps   (heap snapshots after the warm-up and every 5 minutes,
 *                                                     each after a full GC; compare with scripts/memory/heap-diff.mjs)
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Cluster, type Instance } from '../scripts/soak/cluster'
import { SERVER_ENV_DEFAULTS } from '../scripts/soak/args'
import { firewallBody, startUpstream } from '../scripts/soak/setup'
import { mib, MiB, retainedTrend } from '../scripts/memory/trend'
import { apiClient, type Api } from '../test/support/server'
import { redisUrl, uniquePrefix } from '../test/support/redis'
import { WebhookSink } from './support/webhook-sink'

const NS = 'default'
const FW = 'bench'
const TOKEN = `fwp_${'b'.repeat(43)}`
const HOOKS = 20
const LIVE_STREAMS = 10
const SAMPLE_EVERY_MS = 10_000
const PACKAGES = [
  { name: 'fw-ok', expect: 200 },
  { name: '@fwscope/scoped', expect: 200 },
  { name: 'fw-blocked-name', expect: 403 },
]

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const { values } = parseArgs({ options: { minutes: { type: 'string' }, snapshots: { type: 'string' } } })
const minutes = Number(values.minutes ?? 10)
if (!Number.isFinite(minutes) || minutes <= 0) throw new Error(`--minutes must be a positive number`)
const durationMs = minutes * 60_000

/** Counts of what the load did, by kind and outcome. */
const done: Record<string, number> = {}
const count = (what: string) => (done[what] = (done[what] ?? 0) + 1)

async function installLoop(base: string, running: () => boolean): Promise<void> {
  const auth = { authorization: `Bearer ${TOKEN}` }
  for (let i = 0; running(); i++) {
    const pkg = PACKAGES[i % PACKAGES.length]
    try {
      const packument = await fetch(`${base}/registry/${NS}/${FW}/${pkg.name.replace('/', '%2f')}`, { headers: auth })
      const doc = (await packument.json()) as any
      const latest = doc?.['dist-tags']?.latest
      const tarball: string | undefined = latest && doc.versions?.[latest]?.dist?.tarball
      if (packument.status === 200 && tarball) {
        const response = await fetch(tarball, { headers: auth })
        await response.arrayBuffer()
        count(`install ${response.status === pkg.expect ? 'as expected' : `UNEXPECTED ${response.status}`}`)
      } else count(`install packument ${packument.status}`)
    } catch {
      count('install error')
    }
    await sleep(250)
  }
}

async function writeLoop(api: Api, running: () => boolean): Promise<void> {
  const teams: string[] = []
  for (let i = 0; running(); i++) {
    const k = i % 5
    try {
      if (i % 4 === 0) {
        const rule = {
          id: `churn-${k}`,
          executionPhase: 'download',
          selector: { function: { name: 'packageName', patterns: [`bench-never-${k}-*`] } },
          description: `churn ${i}`,
        }
        count(`api rule upsert ${(await api('PUT', `/v1/${NS}/config/${FW}/rules/churn-${k}`, rule)).status}`)
      } else if (i % 4 === 1) {
        count(`api rule delete ${(await api('DELETE', `/v1/${NS}/config/${FW}/rules/churn-${k}`)).status}`)
      } else if (i % 4 === 2) {
        const created = await api('POST', `/v1/${NS}/teams`, { name: `bench ${i}`, permissions: ['ns:audit:read'] })
        if (created.status === 201) teams.push(created.body.id)
        count(`api team create ${created.status}`)
      } else if (teams.length) {
        count(`api team delete ${(await api('DELETE', `/v1/${NS}/teams/${teams.shift()}`)).status}`)
      }
    } catch {
      count('api error')
    }
    await sleep(300)
  }
}

/** Signs in to the dashboard with the token (form and CSRF field, as a browser does); returns the session cookie. */
async function dashboardCookie(base: string): Promise<string> {
  const cookieOf = (response: Response, previous = '') => {
    const set = response.headers.getSetCookie().map((c) => c.split(';')[0])
    return set.length ? set.join('; ') : previous
  }
  const form = await fetch(`${base}/sign-in`)
  const html = await form.text()
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1]
  if (!csrf) throw new Error('no CSRF field on the sign-in page')
  let cookie = cookieOf(form)
  const signedIn = await fetch(`${base}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, namespace: NS, token: TOKEN }).toString(),
  })
  cookie = cookieOf(signedIn, cookie)
  if (signedIn.status >= 400) throw new Error(`dashboard sign-in: ${signedIn.status}`)
  return cookie
}

/** Keeps a live stream open, reading every message, until `signal` aborts. */
async function liveStream(url: string, cookie: string, signal: AbortSignal): Promise<void> {
  try {
    const response = await fetch(url, { headers: { cookie, accept: 'text/event-stream' }, signal })
    if (response.status !== 200 || !response.body) return void count(`live stream refused ${response.status}`)
    count('live stream opened')
    for await (const chunk of response.body)
      if (chunk.length) done['live stream bytes'] = (done['live stream bytes'] ?? 0) + chunk.length
  } catch {
    if (!signal.aborted) count('live stream error')
  }
}

function slopeReport(instance: Instance): string {
  const life = instance.samples.at(-1)!.at - instance.samples[0].at
  const warmupMs = Math.min(120_000, Math.floor(life / 3))
  const trend = retainedTrend(instance.samples, warmupMs)
  if (trend.slopePer10Min === null) return 'retained heap slope: - (too few samples after warm-up)'
  return `retained heap slope after ${(warmupMs / 60_000).toFixed(1)} min warm-up (${trend.samples} readings over ${(trend.spanMs / 60_000).toFixed(1)} min): ${(trend.slopePer10Min / MiB).toFixed(3)} MiB per 10 min`
}

async function main(): Promise<void> {
  const runDir = mkdtempSync(join(tmpdir(), 'pf-bench-memory-'))
  const registry = await startUpstream()
  const sink = await new WebhookSink().start()
  const env = {
    ...SERVER_ENV_DEFAULTS,
    REDIS_URL: await redisUrl(),
    REDIS_PREFIX: uniquePrefix('bench-memory'),
    BOOTSTRAP_TOKEN: TOKEN,
    // SIGUSR2 writes a heap snapshot (V8 collects garbage first) into the directory.
    ...(values.snapshots
      ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${resolve(values.snapshots)}` }
      : {}),
  }
  const cluster = new Cluster(resolve(process.env.SERVER_ENTRY ?? '.output/server/index.mjs'), env, runDir)
  const streams = new AbortController()
  try {
    await cluster.start(1)
    const [base] = cluster.liveUrls()
    const api = apiClient(base, TOKEN)
    const created = await api('PUT', `/v1/${NS}/config/${FW}`, firewallBody(registry))
    if (created.status !== 201) throw new Error(`firewall: ${created.status} ${JSON.stringify(created.body)}`)
    const hooks: string[] = []
    for (let i = 0; i < HOOKS; i++) {
      const hook = await api('POST', `/v1/${NS}/webhooks`, {
        name: `bench-${i}`,
        url: `${sink.url}/hook-${i}`,
        eventTypes: ['firewall.*', 'config.*', 'audit.*'],
      })
      if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`)
      hooks.push(hook.body.id)
    }
    const cookie = await dashboardCookie(base)
    const live = hooks
      .slice(0, LIVE_STREAMS)
      .map((id) => liveStream(`${base}/namespaces/${NS}/live/webhooks/${id}`, cookie, streams.signal))
    let running = true
    const loops = [installLoop(base, () => running), writeLoop(api, () => running)]
    const instance = cluster.instances[0]
    const started = Date.now()
    console.log(
      `bench:memory: ${minutes} min, 1 server process (Redis), ${HOOKS} webhooks, ${LIVE_STREAMS} live streams; server logs in ${runDir}`,
    )
    console.log('  minute  retained heap MiB  RSS MiB  deliveries  events delivered')
    let nextPrint = started + 60_000
    const snapshotAt = values.snapshots ? [2, 5, 10, 15, 20, 25, 30].map((m) => started + m * 60_000) : []
    await cluster.sampleMemory()
    const print = async (minute: string) => {
      const last = instance.samples.at(-1)
      const logs = await sink.collect()
      const deliveries = [...logs.values()].reduce((n, log) => n + log.deliveries, 0)
      console.log(
        `  ${minute.padStart(6)}  ${mib(last?.retainedHeap, 16)}  ${mib(last?.rss, 7)}  ${String(deliveries).padStart(10)}  ${String(sink.received()).padStart(16)}`,
      )
    }
    await print('0')
    while (Date.now() - started < durationMs) {
      await sleep(Math.min(SAMPLE_EVERY_MS, durationMs - (Date.now() - started)))
      await cluster.sampleMemory()
      if (snapshotAt.length && Date.now() >= snapshotAt[0]) {
        snapshotAt.shift()
        process.kill(instance.pid, 'SIGUSR2')
        console.log(`  (heap snapshot at ${((Date.now() - started) / 60_000).toFixed(1)} min into ${values.snapshots})`)
      }
      if (Date.now() >= nextPrint) {
        await print(String(Math.round((Date.now() - started) / 60_000)))
        nextPrint += 60_000
      }
    }
    running = false
    await Promise.all(loops)
    streams.abort()
    await Promise.all(live)
    console.log(slopeReport(instance))
    console.log(
      `load: ${Object.entries(done)
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}`,
    )
  } finally {
    streams.abort()
    await cluster.stop()
    await sink.stop()
    await registry.stop()
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`bench:memory failed: ${(error as Error).stack ?? error}`)
    process.exit(1)
  },
)
