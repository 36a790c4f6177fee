/**
 * fs storage transactions: what the write-ahead journal (storage/local/journal.ts) costs. A firewall
 * change as the service writes it (a 2 KB document, its history entry and its event: three files)
 * by CONCURRENCY writers at once, on the fs driver in a fresh temp directory, with the journal and
 * without it (the baseline) in turns, ROUNDS rounds of TRANSACTIONS each after one run not counted; then a one-file write
 * (a webhook cursor: no journal) both ways. Prints transactions/s, latency p50/p99 and the ratio to
 * the baseline; asserts nothing. Run: npm run bench:fs-transactions
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import { LocalBackend } from '../storage'
import { atomicFsDriver } from '../storage/atomic-fs-driver'
import { keys } from '../storage/repositories/keys'
import { percentile } from './support/webhook-sink'

const TRANSACTIONS = Number(process.env.TRANSACTIONS ?? 2000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const NS = 'bench'

/** About the size of a firewall of ten rules as the service stores it. */
const firewall = (version: number) => ({
  id: 'fw',
  version,
  rules: Array.from({ length: 10 }, (_, i) => ({
    id: `r${i}`,
    executionPhase: 'download',
    selector: { function: { name: 'packageName', patterns: [`evil-${i}-${version}-*`] } },
    ruleEffect: { block: true, log: true },
  })),
})

type Shape = 'firewall change (3 files)' | 'cursor (1 file)'

function write(backend: LocalBackend, shape: Shape, writer: number, version: number): Promise<void> {
  const doc = keys.firewall(NS, `fw-${writer}`)
  if (shape === 'cursor (1 file)')
    return backend.keyValue.transact([doc], () => ({
      writes: { set: { [doc]: { cursor: String(version).padStart(12, '0'), batch: null } } },
      result: undefined,
    }))
  const value = firewall(version)
  return backend.keyValue.transact([doc], () => ({
    writes: {
      set: { [doc]: value, [keys.firewallVersion(NS, `fw-${writer}`, version)]: value },
      events: [
        {
          id: `e-${writer}-${version}`,
          type: 'config.firewall.updated',
          time: new Date().toISOString(),
          namespace: NS,
          data: { config: value },
        },
      ],
    },
    result: undefined,
  }))
}

/** TRANSACTIONS writes of `shape` by CONCURRENCY writers: transactions/s and the latencies, sorted. */
async function run(journal: boolean, shape: Shape): Promise<{ perSecond: number; latencies: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'pf-fs-tx-'))
  const backend = new LocalBackend(createStorage({ driver: atomicFsDriver({ base: dir }) }), { journal })
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, writer) => {
      for (let n = next++; n < TRANSACTIONS; n = next++) {
        const sent = performance.now()
        await write(backend, shape, writer, n)
        latencies.push(performance.now() - sent)
      }
    }),
  )
  const elapsed = performance.now() - started
  await backend.close()
  rmSync(dir, { recursive: true, force: true })
  return { perSecond: (TRANSACTIONS / elapsed) * 1000, latencies: latencies.sort((a, b) => a - b) }
}

async function main() {
  console.log(
    `fs transactions: ${TRANSACTIONS} per run, ${CONCURRENCY} writers, ${ROUNDS} rounds alternating, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  )
  for (const shape of ['firewall change (3 files)', 'cursor (1 file)'] as const) {
    const results = { journal: [] as number[], baseline: [] as number[] }
    const all = { journal: [] as number[], baseline: [] as number[] }
    // Not counted: the process's first run of a shape was faster than any after it (up to 2.6x).
    await run(false, shape)
    for (let round = 0; round < ROUNDS; round++) {
      for (const journal of round % 2 === 0 ? [false, true] : [true, false]) {
        const { perSecond, latencies } = await run(journal, shape)
        const side = journal ? 'journal' : 'baseline'
        results[side].push(perSecond)
        all[side].push(...latencies)
      }
    }
    for (const side of ['baseline', 'journal'] as const) {
      all[side].sort((a, b) => a - b)
      const mean = results[side].reduce((a, b) => a + b, 0) / results[side].length
      const ratio = mean / (results.baseline.reduce((a, b) => a + b, 0) / results.baseline.length)
      console.log(
        `  ${shape.padEnd(27)} ${side === 'journal' ? 'with journal   ' : 'without (base) '} ${mean.toFixed(0).padStart(6)} tx/s (${results[side].map((r) => r.toFixed(0)).join(', ')})   p50 ${percentile(all[side], 50).toFixed(2)} ms   p99 ${percentile(all[side], 99).toFixed(2)} ms   ratio ${ratio.toFixed(2)}`,
      )
    }
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
