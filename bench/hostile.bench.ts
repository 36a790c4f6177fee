/**
 * Hostile inputs at their bounds (CONTRACT section 8, "costs an outsider controls"): for each
 * worst case, the event-loop delay of this thread (p99 and max, perf_hooks.monitorEventLoopDelay)
 * and the peak memory (RSS and JS heap, sampled every 5 ms and at the end) while it is processed.
 * The work runs as the service runs it, one item per macrotask (a request at a time), so the
 * delay shows what one item holds the loop for; "task max" is the longest single task, from a
 * 1 ms interval's drift (the delay histogram alone has missed one long task).
 *   npm run bench:hostile  (ENTRIES=500000 for the advisory archive; default ADVISORY_MAX_ENTRIES)
 *   BENCH_CASES=archive,versions npm run bench:hostile  (only the cases whose label holds one of the words)
 * "cpu max" is the CPU this thread used in that longest task (Linux): on a busy machine a late
 * tick is mostly waiting for a core, and this says how much of it was our work.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { threadLoader } from '../server/advisories/archive-loader'
import { DEFAULT_MAX_ADVISORY_ENTRIES } from '../server/advisories/refresh-guard'
import { Rule } from '../server/firewall/schema'
import { licenseSatisfied } from '../server/firewall/rules/license'
import { MAX_SELECTOR_DEPTH } from '../server/firewall/rules/selector-depth'
import { matchSelector } from '../server/firewall/rules/selectors'
import { DEFAULT_UPSTREAM_BODY_LIMITS } from '../server/registry/upstream/body-limit'
import { UPSTREAM_MAX_MEMBERS } from '../server/registry/upstream/member-limit'
import { callUpstream } from '../server/registry/upstream/client'
import { readUpstreamBody } from '../server/registry/upstream/body-text'
import { parseFactObject } from '../server/registry/fact-fetch'
import { joinCooperatively } from '../server/common/cooperative-bytes'
import {
  filterPackument,
  rewriteTarballUrls,
  toAbbreviated,
  type Manifest,
  type Packument,
} from '../server/registry/npm/packument'
import { prepareJsonDocument } from '../server/registry/responses'
import { fitEvent } from '../server/webhooks/protocol/event-fit'
import type { NamespaceEvent } from '../server/events/schemas'
import { createUpstreamTransport } from '../server/registry/upstream/transport'
import { parseJsonCooperatively, stringifyCooperatively } from '../server/common/cooperative-json'
import { readStoredText } from '../storage/stored-json'
import { parseFirewallInput } from '../server/firewall/input-parse'
import { validateFirewall } from '../server/firewall/validation'
import { permissionsForChange, summarizeChange } from '../server/firewall/diff'
import { configFromEnv } from '../server/app/config'
import type { Firewall } from '../server/firewall/schema'
import { BUILT_LOADER } from './support/built-loader'
import { watchLoop } from './support/loop-watch'
import { syntheticZip } from './support/synthetic-osv'

const MB = 1024 * 1024
const ENTRIES = Number(process.env.ENTRIES ?? DEFAULT_MAX_ADVISORY_ENTRIES)
const CASES = (process.env.BENCH_CASES ?? '')
  .split(',')
  .map((word) => word.trim().toLowerCase())
  .filter(Boolean)
/** Whether the case labelled `label` runs (BENCH_CASES unset: every case). */
const wanted = (label: string) => CASES.length === 0 || CASES.some((word) => label.toLowerCase().includes(word))

/** Collects, waits for the freed pages to go back to the system, collects again (bench set-up only). */
async function settleHeap(): Promise<void> {
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 3000))
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 1000))
}

/** Runs `work`, printing the loop delay and the peak memory it caused. */
async function measure(label: string, work: () => Promise<string>): Promise<void> {
  if (!wanted(label)) return
  globalThis.gc?.()
  const base = process.memoryUsage()
  let rss = base.rss
  let heap = base.heapUsed
  const sample = () => {
    const now = process.memoryUsage()
    rss = Math.max(rss, now.rss)
    heap = Math.max(heap, now.heapUsed)
  }
  const sampler = setInterval(sample, 5)
  const watch = watchLoop()
  const started = performance.now()
  const outcome = await work()
  const ms = performance.now() - started
  sample()
  const loop = watch.stop()
  clearInterval(sampler)
  const mb = (bytes: number) => (bytes / MB).toFixed(1).padStart(7)
  console.log(
    `${label.padEnd(48)} loop p99 ${loop.delayP99Ms.toFixed(1).padStart(6)} ms  max ${loop.delayMaxMs.toFixed(1).padStart(7)} ms` +
      `  task max ${loop.taskMaxMs.toFixed(1).padStart(6)} ms (cpu max ${loop.taskCpuMaxMs.toFixed(1)} ms)  (gc max ${loop.gcMaxMs.toFixed(1)} ms)` +
      `  peak rss ${mb(rss)} MB (+${mb(rss - base.rss)})  heap ${mb(heap)} MB  ${ms.toFixed(0)} ms  ${outcome}`,
  )
}

const doubling = (terms: number) => Array.from({ length: terms }, () => '(MIT OR ISC)').join(' AND ')
const SET = ['MIT', 'ISC', 'Apache-2.0', 'BSD-3-Clause', 'GPL-3.0-or-later']

async function licenses(expression: string, times: number): Promise<string> {
  let result: boolean | null = null
  for (let i = 0; i < times; i++) {
    result = licenseSatisfied(expression, SET)
    await nextTurn()
  }
  return `${times} evaluations of ${expression.length} chars -> ${result}`
}

function nested(levels: number): unknown {
  let selector: unknown = { function: { name: 'deprecated' } }
  for (let i = 1; i < levels; i++) selector = { function: { name: 'not', selector } }
  return selector
}

async function selectors(levels: number, times: number): Promise<string> {
  const facts = { ecosystem: 'npm' as const, packageName: 'a', version: '1.0.0' }
  const ctx = {
    now: Date.now(),
    licenseSets: new Map(),
    advisories: { lookup: () => ({ vulnerabilities: [], malware: [] }) },
  }
  let outcome = ''
  for (let i = 0; i < times; i++) {
    try {
      const rule = Rule.parse({ id: 'r', executionPhase: 'download', selector: nested(levels) })
      outcome = `matched ${matchSelector(rule.selector, facts, ctx as never).matched}`
    } catch (error) {
      outcome = `refused (${(error as { code?: string }).code})`
    }
    await nextTurn()
  }
  return `${times} parses + evaluations -> ${outcome}`
}

/**
 * A packument of `bytes`: 50,000 versions (UPSTREAM_MAX_MEMBERS) of about 1 KiB (every tenth deprecated, `latest` among
 * them) and a readme filling the rest.
 */
function bigPackument(bytes: number): Buffer {
  const doc: Packument & { time: Record<string, string>; versions: Record<string, Manifest> } = {
    name: 'big',
    'dist-tags': { latest: '1.0.49990' },
    time: {},
    versions: {},
  }
  for (let i = 0; i < 50_000; i++) {
    const version = `1.0.${i}`
    doc.time[version] = '2020-01-01T00:00:00.000Z'
    doc.versions[version] = {
      name: 'big',
      version,
      description: 'd'.repeat(600),
      license: 'MIT',
      ...(i % 10 === 0 ? { deprecated: 'do not use' } : {}),
      scripts: { test: 'node test.js' },
      dependencies: { 'left-pad': '^1.3.0' },
      dist: {
        tarball: `http://up/big/-/big-${version}.tgz`,
        integrity: `sha512-${'A'.repeat(86)}==`,
        shasum: 'f'.repeat(40),
      },
    }
  }
  doc.readme = ''
  doc.readme = 'r'.repeat(Math.max(0, bytes - Buffer.byteLength(JSON.stringify(doc))))
  return Buffer.from(JSON.stringify(doc))
}

/**
 * A loopback upstream answering `doc` (chunked, so only counting bounds it), and the proxy's
 * whole pass over it as a packument request runs it: read, parse, the cache entry, the versions
 * filter (a deprecated rule), tarball URLs, the full and the abbreviated documents serialised and hashed.
 */
async function upstreamAnswer(doc: Buffer): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    for (let at = 0; at < doc.length; at += 64 * 1024) res.write(doc.subarray(at, at + 64 * 1024))
    res.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big`
  const upstream = { id: 'bench', endpoint: url, internal: false, cached: false }
  try {
    const response = await callUpstream(transport, upstream, url)
    const body = await readUpstreamBody(response)
    const parsed = (await parseFactObject(body.pieces, 'the packument', 'bench')) as unknown as Packument
    await joinCooperatively(['{"found":true,"fetchedAt":0}\n', ...body.chunks])
    const blocked = { outcome: 'blocked', message: 'deprecated' } as const
    const allowed = { outcome: 'allowed', message: '' } as const
    const filtered = await filterPackument(parsed, (_v, manifest) => (manifest.deprecated ? blocked : allowed))
    const { packument } = await rewriteTarballUrls(filtered, 'http://fw/registry/default/npm/')
    const full = await prepareJsonDocument(packument)
    const abbreviated = await prepareJsonDocument(await toAbbreviated(packument))
    const versions = Object.keys(packument.versions ?? {}).length
    await nextTurn()
    return `${(doc.length / MB).toFixed(1)} MB: ${versions} versions served, ${(full.bytes / MB).toFixed(1)} MB full, ${(abbreviated.bytes / MB).toFixed(1)} MB abbreviated`
  } catch (error) {
    return `${(doc.length / MB).toFixed(1)} MB refused: ${(error as Error).message.slice(0, 60)}`
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

/** A packument of `count` empty versions: the most versions per byte an upstream can send. */
function manyVersions(count: number): Buffer {
  const versions: Record<string, Manifest> = {}
  for (let i = 0; i < count; i++) versions[`1.0.${i}`] = {} as Manifest
  return Buffer.from(JSON.stringify({ name: 'many', 'dist-tags': { latest: `1.0.${count - 1}` }, versions }))
}

/** A firewall event holding 60,000 permission entries (a large config PUT). */
function largeFirewallEvent(): NamespaceEvent {
  const permissions: Record<string, string[]> = {}
  for (let i = 0; i < 60_000; i++) permissions[`user-${i}`] = ['fw:read']
  return {
    id: 'evt_1',
    type: 'firewall.config.updated',
    time: new Date().toISOString(),
    namespace: 'default',
    data: { firewall: 'npm', version: 2, config: { ecosystem: 'npm', permissions, rules: [] } },
  } as unknown as NamespaceEvent
}

/** The delivery cut of `event`, as delivery runs it (taking turns); a turn after it, so the delay is seen. */
async function fitOnce(event: NamespaceEvent): Promise<string> {
  await nextTurn()
  const fitted = await fitEvent(event, 512 * 1024 - 25)
  await nextTurn()
  return `${(JSON.stringify(event).length / MB).toFixed(1)} MB cut to ${(fitted.json.length / 1024).toFixed(0)} KB`
}

async function archive(zip: Uint8Array, maxEntries: number): Promise<string> {
  const loader = threadLoader({ entry: BUILT_LOADER })
  if (!loader) return 'no loader thread (run npx nitro build first)'
  async function* chunks() {
    for (let at = 0; at < zip.length; at += 256 * 1024) yield zip.subarray(at, at + 256 * 1024)
  }
  try {
    const loaded = await loader.archive(chunks(), undefined, null, maxEntries)
    return `${(zip.length / MB).toFixed(1)} MB, ${loaded.records} records loaded on the loader thread`
  } catch (error) {
    return `${(zip.length / MB).toFixed(1)} MB refused: ${(error as Error).message.slice(0, 70)}`
  }
}

/** A firewall PUT body just under the 1 MiB body limit: 9,000 rules, or 47,500 principals. */
function largeFirewallBody(kind: 'rules' | 'principals', tag: string): string {
  if (kind === 'principals')
    return JSON.stringify({
      ecosystem: 'npm',
      permissions: Object.fromEntries(Array.from({ length: 47_500 }, (_, i) => [`u${tag}${i}`, ['fw:read']])),
    })
  return JSON.stringify({
    ecosystem: 'npm',
    rules: Array.from({ length: 9000 }, (_, i) => ({
      id: `r${tag}${i}`,
      executionPhase: 'download',
      selector: { function: { name: 'packageName', patterns: [`p${i}-*`] } },
    })),
  })
}

/**
 * The domain's share of a firewall replace, each step as the write runs it (in turns): the stored
 * version read back from its text (storage/stored-json.ts), the body parsed and judged by zod,
 * validateFirewall, both diff passes against the stored version, and the document serialised as
 * the local store writes it and as the answer is. File and Redis I/O and the HTTP layer are not in it.
 */
async function asFirewall(text: string): Promise<Firewall> {
  const input = await parseFirewallInput(await parseJsonCooperatively(text))
  if (!input.success) throw new Error(input.error.message)
  const { name: _name, ...data } = input.data
  return { ...data, id: 'big', version: 1, name: 'big', description: '', updatedAt: '' } as Firewall
}

async function firewallWrite(stored: string, text: string): Promise<string> {
  await nextTurn()
  const previous = (await readStoredText(stored)) as Firewall
  const next = await asFirewall(text)
  await validateFirewall(next, {
    id: 'big',
    previous,
    startsFrom: previous,
    rules: 'all',
    licenseSetIds: new Set(),
    firewalls: new Map(),
    readable: () => true,
    upstreamAddresses: configFromEnv({}).upstreamAddresses,
  })
  const needs = await permissionsForChange(previous, next)
  const summary = await summarizeChange(previous, next)
  const written = await stringifyCooperatively(next)
  // The answer: the same document again (a redacted copy shares every large member).
  await stringifyCooperatively(next)
  await nextTurn()
  return `${(text.length / MB).toFixed(2)} MB body: needs ${needs.join(',')}; ${summary.length} chars of summary; ${(written.bytes / MB).toFixed(2)} MB stored`
}

const transport = createUpstreamTransport({ allowedNetworks: ['127.0.0.0/8'], deniedNetworks: [] })
console.log(`hostile inputs (node ${process.version}); memory is the process's, sampled every 5 ms`)
await measure('license: 22 doubling AND terms (43 operators)', () => licenses(doubling(22), 2000))
await measure('license: at the bound (64 operators)', () => licenses(`${doubling(32)} OR MIT`, 2000))
await measure('license: past the bound (3,000 terms)', () => licenses(doubling(3000), 2000))
await measure(`selector: ${MAX_SELECTOR_DEPTH} deep (the bound)`, () => selectors(MAX_SELECTOR_DEPTH, 2000))
await measure('selector: 100,000 deep (refused)', () => selectors(100_000, 20))
const bound = DEFAULT_UPSTREAM_BODY_LIMITS.metadata
// The documents are built before the measuring starts: building them is the bench's work, not the server's.
if (wanted('packument: just under UPSTREAM_MAX_BODY (64MB)')) {
  const underBound = bigPackument(bound - 64 * 1024)
  await measure('packument: just under UPSTREAM_MAX_BODY (64MB)', () => upstreamAnswer(underBound))
}
if (wanted('packument: past it (80MB, chunked)')) {
  const pastBound = bigPackument(80 * MB)
  await measure('packument: past it (80MB, chunked)', () => upstreamAnswer(pastBound))
}
for (const [label, count] of [
  [`versions: ${UPSTREAM_MAX_MEMBERS} empty (UPSTREAM_MAX_MEMBERS)`, UPSTREAM_MAX_MEMBERS],
  [`versions: ${UPSTREAM_MAX_MEMBERS + 1} empty (refused)`, UPSTREAM_MAX_MEMBERS + 1],
  ['versions: 200000 empty (refused; 2.4 MB)', 200_000],
] as const) {
  if (!wanted(label)) continue
  const doc = manyVersions(count)
  await measure(label, () => upstreamAnswer(doc))
}
// The bodies and the stored version are built before the measuring starts, as for the packument.
for (const [label, kind] of [
  ['firewall PUT: 9,000 rules (1 MiB body)', 'rules'],
  ['firewall PUT: 47,500 principals (1 MiB body)', 'principals'],
] as const) {
  if (!wanted(label)) continue
  const stored = JSON.stringify(await asFirewall(largeFirewallBody(kind, 'a')))
  const text = largeFirewallBody(kind, 'b')
  await measure(label, () => firewallWrite(stored, text))
}
if (wanted('event cut: 1.4 MB firewall event to 512 KB')) {
  const firewallEvent = largeFirewallEvent()
  await measure('event cut: 1.4 MB firewall event to 512 KB', () => fitOnce(firewallEvent))
}
if (wanted('advisory archive')) {
  const zip = syntheticZip(ENTRIES)
  // Building the zip leaves about 400 MB of this thread's heap to free: V8 gives those pages back
  // over the next seconds, and a collection in the first measured case waited for it (10.8 s of
  // GC, 197 ms of CPU in one task, load 25), which read as the archive's cost. The loader's own
  // share, measured apart from this, is under 7 ms of CPU in the longest task.
  await settleHeap()
  await measure(`advisory archive: ${ENTRIES} entries (the bound)`, () => archive(zip, ENTRIES))
  await measure(`advisory archive: ${ENTRIES} entries, bound ${ENTRIES - 1}`, () => archive(zip, ENTRIES - 1))
}
await transport.close()
