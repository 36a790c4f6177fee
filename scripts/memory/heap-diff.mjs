/**
 * What grew between two heap snapshots of one process (each taken after a full GC, e.g. by
 * `npm run bench:memory -- --snapshots DIR` or `kill -USR2` on a server started with
 * `--heapsnapshot-signal=SIGUSR2`): self size and count per constructor (strings together, code
 * by kind), the largest growers first.
 *   node --max-old-space-size=4096 scripts/memory/heap-diff.mjs before.heapsnapshot after.heapsnapshot [top]
 */
import { readFileSync } from 'node:fs'

function byConstructor(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'))
  const meta = snapshot.snapshot.meta
  const fields = meta.node_fields.length
  const types = meta.node_types[0]
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => meta.node_fields.indexOf(f))
  const groups = new Map()
  let total = 0
  const nodes = snapshot.nodes
  for (let n = 0; n < nodes.length; n += fields) {
    const kind = types[nodes[n + type]]
    const label = kind.endsWith('string') ? 'string' : `${kind}:${snapshot.strings[nodes[n + name]].slice(0, 60)}`
    const group = groups.get(label) ?? { count: 0, size: 0 }
    group.count++
    group.size += nodes[n + size]
    total += nodes[n + size]
    groups.set(label, group)
  }
  return { groups, total }
}

const [before, after, top = '25'] = process.argv.slice(2)
if (!before || !after) {
  console.error('usage: heap-diff.mjs before.heapsnapshot after.heapsnapshot [top]')
  process.exit(2)
}
const a = byConstructor(before)
const b = byConstructor(after)
const MiB = 1024 * 1024
console.log(
  `retained (snapshot total self size): ${(a.total / MiB).toFixed(1)} MiB -> ${(b.total / MiB).toFixed(1)} MiB`,
)
const rows = [...new Set([...a.groups.keys(), ...b.groups.keys()])].map((label) => {
  const x = a.groups.get(label) ?? { count: 0, size: 0 }
  const y = b.groups.get(label) ?? { count: 0, size: 0 }
  return { label, count: y.count - x.count, size: y.size - x.size, now: y }
})
rows.sort((p, q) => q.size - p.size)
for (const row of rows.slice(0, Number(top)))
  console.log(
    `  ${row.label.padEnd(64)} ${(row.count >= 0 ? '+' : '') + row.count} objects  ${(row.size >= 0 ? '+' : '') + (row.size / 1024).toFixed(0)} KiB  (now ${row.now.count}, ${(row.now.size / 1024).toFixed(0)} KiB)`,
  )
