import type { SoakResult } from './soak'
import { memoryTable, slopeLine } from './memory'

const MiB = 1024 * 1024
const mib = (bytes: number | undefined) =>
  bytes === undefined || !Number.isFinite(bytes) ? '   -  ' : `${(bytes / MiB).toFixed(1).padStart(6)}`
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)))
  return rows
    .map((row) => '  ' + row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '))
    .join('\n')
}

/** The printed figures of a soak run (what the closing note quotes). */
export function formatReport(result: SoakResult): string {
  const lines: string[] = []
  const hooks = result.hooks
  const failedEvents = sum(hooks.map((h) => h.dropped.failedEvents))
  const overflow = sum(hooks.map((h) => h.dropped.bufferOverflow))
  lines.push('', '=== soak report ===')
  lines.push(
    `duration ${(result.durationMs / 1000).toFixed(0)} s (drain ${(result.drain.ms / 1000).toFixed(1)} s, ${result.drain.complete ? 'complete' : 'TIMED OUT'}); server logs in ${result.runDir}`,
  )
  lines.push(
    `events produced          ${result.events.produced}  (${Object.entries(result.events.byFamily)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})`,
  )
  lines.push(`subscriptions expected   ${sum(hooks.map((h) => h.expected))}  (event x webhook pairs)`)
  lines.push(
    `delivered                ${sum(hooks.map((h) => h.deliveredDistinct))}  (distinct pairs acknowledged by the receiver)`,
  )
  lines.push(
    `dropped                  ${failedEvents + overflow}  (retries exhausted: ${failedEvents} events in ${sum(hooks.map((h) => h.dropped.failedBatches))} failed batches; buffer_overflow: ${overflow} in ${sum(hooks.map((h) => h.dropped.overflowNotices))} notices)`,
  )
  lines.push(
    `missing                  ${sum(hooks.map((h) => h.missing.length))}  (not delivered and not in a failed batch; must not exceed the buffer_overflow count above)`,
  )
  lines.push(
    `duplicates               ${sum(hooks.map((h) => h.duplicates.events))} events delivered more than once (${sum(hooks.map((h) => h.duplicates.extraReceipts))} extra receipts, ${sum(hooks.map((h) => h.duplicates.batchesReacked))} batches acknowledged twice)`,
  )
  const app = (pick: (h: (typeof hooks)[number]) => number) => sum(hooks.map(pick))
  lines.push(
    `handled by application   ${app((h) => h.application.handled)} events through the receiver kit, which skipped ${app((h) => h.application.absorbed)} re-deliveries; handled twice ${app((h) => h.application.handledTwice.length)}, acknowledged but unhandled ${app((h) => h.application.ackedUnhandled.length)} (both must be 0)`,
  )
  lines.push(`order violations         ${sum(hooks.map((h) => h.orderViolations.length))}`)
  lines.push(`concurrent deliveries    ${sum(hooks.map((h) => h.concurrent))}`)
  lines.push(`bad signatures           ${sum(hooks.map((h) => h.badSignatures))}`)
  lines.push(
    `kills survived           ${result.kills.survived} of ${result.kills.total} SIGKILLs (restart to ready: ${result.kills.restartMs.length ? `${Math.min(...result.kills.restartMs)}-${Math.max(...result.kills.restartMs)} ms` : '-'}); crashes ${result.crashes.length}`,
  )
  lines.push('', 'per webhook:')
  lines.push(
    table([
      [
        'webhook',
        'expected',
        'delivered',
        'attempts',
        'acked',
        'refused',
        'interrupted',
        'batches',
        'failed',
        'dropped',
        'dup',
        'order',
        'overlap',
        'records',
      ],
      ...hooks.map((h) =>
        [
          h.name,
          h.expected,
          h.deliveredDistinct,
          h.deliveries.attempts,
          h.deliveries.acked,
          h.deliveries.refused,
          h.deliveries.interrupted,
          h.deliveries.deliveryIds,
          h.dropped.failedBatches,
          h.dropped.failedEvents + h.dropped.bufferOverflow,
          h.duplicates.events,
          h.orderViolations.length,
          h.concurrent,
          h.records.retained,
        ].map(String),
      ),
    ]),
  )
  lines.push('', 'metrics API vs receiver (success / failed attempts, events sent / dropped):')
  lines.push(
    table([
      ['webhook', 'api', 'receiver', 'problems'],
      ...hooks.map((h) => {
        const f = (m: typeof h.metrics.api) =>
          `${m.deliveriesSuccess}/${m.deliveriesFailed} ${m.eventsSent}/${m.eventsDropped}`
        return [h.name, f(h.metrics.api), f(h.metrics.receiver), String(h.metrics.problems.length)]
      }),
    ]),
  )
  lines.push(
    '',
    'retained heap / RSS per slot (MiB; retained = heap in use after a full GC; * = process restarted that minute):',
  )
  lines.push(memoryTable(result.instances, result.startedAt))
  lines.push(slopeLine(result.memory))
  lines.push('', 'memory per slot (retained heap / RSS, MiB; first process at start, last process at end):')
  const slots = [...new Set(result.instances.map((i) => i.slot))].sort((a, b) => a - b)
  lines.push(
    table([
      ['slot', 'processes', 'heap start', 'heap end', 'rss start', 'rss end', 'longest life', 'its heap start->end'],
      ...slots.map((slot) => {
        const own = result.instances.filter((i) => i.slot === slot && i.samples.length)
        const start = own[0]?.samples[0]
        const end = own.at(-1)?.samples.at(-1)
        const longest = [...own].sort(
          (a, b) => b.samples.at(-1)!.at - b.samples[0].at - (a.samples.at(-1)!.at - a.samples[0].at),
        )[0]
        const life = longest ? `${((longest.samples.at(-1)!.at - longest.samples[0].at) / 1000).toFixed(0)} s` : '-'
        return [
          String(slot),
          String(result.instances.filter((i) => i.slot === slot).length),
          mib(start?.retainedHeap),
          mib(end?.retainedHeap),
          mib(start?.rss),
          mib(end?.rss),
          life,
          longest
            ? `${mib(longest.samples[0].retainedHeap).trim()} -> ${mib(longest.samples.at(-1)!.retainedHeap).trim()}`
            : '-',
        ]
      }),
    ]),
  )
  lines.push('', 'producer (operation: outcome counts):')
  for (const [op, outcomes] of Object.entries({ ...result.producer.ops, ...result.producer.installs })) {
    lines.push(
      `  ${op.padEnd(32)} ${Object.entries(outcomes)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    )
  }
  lines.push('')
  if (result.violations.length === 0) lines.push('RESULT: PASS (no violations)')
  else {
    lines.push(`RESULT: FAIL (${result.violations.length} violations)`)
    for (const violation of result.violations.slice(0, 50)) lines.push(`  - ${violation}`)
  }
  return lines.join('\n')
}
