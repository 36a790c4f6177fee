/**
 * Hostile inputs at their bounds (CONTRACT section 8, "costs an outsider controls"): for each
 * worst case, the event-loop delay of this thread (p99 and max, perf_hooks.monitorEventLoopDelay)
 * and the peak memory (RSS and JS heap, sampled every 5 ms and at the end) while it is processed.
 * The work runs as the service runs it, one item per macrotask (a request at a time), so the
 * delay shows what one item holds the loop for.
 *   npm run bench:hostile  (ENTRIES=500000 for the advisory archive; default ADVISORY_MAX_ENTRIES)
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
import { callUpstream } from '../server/registry/upstream/client'
import { createUpstreamTransport } from '../server/registry/upstream/transport'
import { BUILT_LOADER } from './support/built-loader'
import { watchLoop } from './support/loop-watch'
import { syntheticZip } from './support/synthetic-osv'

const MB = 1024 * 1024
const ENTRIES = Number(process.env.ENTRIES ?? DEFAULT_MAX_ADVISORY_ENTRIES)

/** Runs `work`, printing the loop delay and the peak memory it caused. */
async function measure(label: string, work: () => Promise<string>): Promise<void> {
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
    `${label.padEnd(44)} loop p99 ${loop.delayP99Ms.toFixed(1).padStart(6)} ms  max ${loop.delayMaxMs.toFixed(1).padStart(7)} ms` +
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

/** A loopback upstream answering `bytes` as a packument (chunked, so only counting bounds it). */
async function upstreamAnswer(bytes: number): Promise<string> {
  const doc = Buffer.from(JSON.stringify({ name: 'big', readme: 'x'.repeat(bytes - 40) }))
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
    // As the packument path does: the text, then JSON.
    const parsed = JSON.parse(await response.text()) as { name: string }
    return `${(doc.length / MB).toFixed(1)} MB read and parsed (${parsed.name})`
  } catch (error) {
    return `${(doc.length / MB).toFixed(1)} MB refused: ${(error as Error).message.slice(0, 60)}`
  } finally {
    server.closeAllConnections()
    server.close()
  }
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

const transport = createUpstreamTransport({ allowedNetworks: ['127.0.0.0/8'], deniedNetworks: [] })
console.log(`hostile inputs (node ${process.version}); memory is the process's, sampled every 5 ms`)
await measure('license: 22 doubling AND terms (43 operators)', () => licenses(doubling(22), 2000))
await measure('license: at the bound (64 operators)', () => licenses(`${doubling(32)} OR MIT`, 2000))
await measure('license: past the bound (3,000 terms)', () => licenses(doubling(3000), 2000))
await measure(`selector: ${MAX_SELECTOR_DEPTH} deep (the bound)`, () => selectors(MAX_SELECTOR_DEPTH, 2000))
await measure('selector: 100,000 deep (refused)', () => selectors(100_000, 20))
const body = DEFAULT_UPSTREAM_BODY_LIMITS.metadata
await measure('upstream answer: at UPSTREAM_MAX_BODY (64MB)', () => upstreamAnswer(body))
await measure('upstream answer: past it (80MB, chunked)', () => upstreamAnswer(80 * MB))
const zip = syntheticZip(ENTRIES)
await measure(`advisory archive: ${ENTRIES} entries (the bound)`, () => archive(zip, ENTRIES))
await measure(`advisory archive: ${ENTRIES} entries, bound ${ENTRIES - 1}`, () => archive(zip, ENTRIES - 1))
await transport.close()
