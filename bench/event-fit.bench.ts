/**
 * Oversized-event cut benchmark: the cost of building a delivery body for one event past 512 KB
 * (an 805 KB and a 1 MiB firewall change, the API's body limit, and flat shapes: one long string,
 * 60,000 record keys), against the cost of the same event's plain JSON.stringify. Prints, per
 * shape, the input size, the body size, and p50 / max milliseconds over the runs: of the first
 * cut (an event not seen before: a new id each run) and of a body built again (another attempt, a
 * record read: the cut is kept, delivered-event.ts). The times are wall time: the cut takes turns
 * with the rest of the process (bench/hostile.bench.ts measures the longest single task).
 *   npx tsx bench/event-fit.bench.ts [--reps 20]
 */
import { parseArgs } from 'node:util'
import type { NamespaceEvent } from '../server/events/schemas'
import { envelope } from '../server/webhooks/protocol/batching'
import { bigFirewallConfig } from '../test/webhooks/support/big-config'

const { values: args } = parseArgs({ options: { reps: { type: 'string', default: '20' } } })
const REPS = Number(args.reps)

let seq = 0
const event = (data: Record<string, unknown>): NamespaceEvent => ({
  id: `evt-0mwxk099k${String(++seq).padStart(16, '0')}`,
  type: 'config.firewall.updated',
  time: '2026-11-26T12:00:00.000Z',
  namespace: 'acme',
  data,
})
const config = (kb: number) =>
  event({ firewall: 'main', version: 2, ecosystem: 'npm', actor: { userId: 'o' }, config: bigFirewallConfig(kb) })

const shapes: [string, NamespaceEvent][] = [
  ['firewall change 805 KB', config(805)],
  ['firewall change 1 MiB', config(1024)],
  ['one 1 MiB string', event({ message: 'a'.repeat(1024 * 1024) })],
  [
    '60,000 record keys',
    event({ config: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 'v'.repeat(10)])) }),
  ],
]

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

const timed = async (times: number[], run: () => unknown) => {
  const start = performance.now()
  await run()
  times.push(performance.now() - start)
}

for (const [name, value] of shapes) {
  const times: number[] = []
  const again: number[] = []
  const plain: number[] = []
  let body = ''
  for (let rep = 0; rep < REPS; rep++) {
    // A new id: an event the cache has not seen, cut from scratch.
    const fresh = { ...value, id: `${value.id}-${rep}` }
    await timed(times, async () => (body = (await envelope([fresh])).body))
    await timed(again, () => envelope([fresh]))
    await timed(plain, () => JSON.stringify({ version: 1, events: [fresh] }))
  }
  for (const list of [times, again, plain]) list.sort((a, b) => a - b)
  console.log(
    `${name}: input ${Buffer.byteLength(JSON.stringify(value))} B, body ${Buffer.byteLength(body)} B, ` +
      `cut p50 ${quantile(times, 0.5).toFixed(1)} ms max ${times[times.length - 1].toFixed(1)} ms, ` +
      `again p50 ${quantile(again, 0.5).toFixed(1)} ms ` +
      `(plain stringify p50 ${quantile(plain, 0.5).toFixed(1)} ms)`,
  )
}
