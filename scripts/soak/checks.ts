import type { Attempt } from './receiver'
import type { LoggedEvent, MetricTotals, RecordView } from './observe'
import type { SoakWebhook } from './setup'

/** What the run observed, gathered by soak.ts after the drain. */
export interface Observations {
  ns: string
  log: LoggedEvent[]
  webhooks: SoakWebhook[]
  attempts: Attempt[]
  overlaps: { hook: string; first: string; second: string }[]
  /** Every delivery record seen while polling (latest version per id). */
  recordsSeen: (RecordView & { hook: string })[]
  /** The records the API retains at the end, per webhook name. */
  recordsNow: Map<string, RecordView[]>
  metrics: Map<string, MetricTotals>
  kills: number
  /** What the receiving application handled (through the kit), per webhook name: event id -> times. */
  handled: Map<string, Map<string, number>>
  /** Per webhook name: events the kit skipped as already handled (re-deliveries it absorbed). */
  absorbed: Map<string, number>
}

/** Figures and violations of one webhook. */
export interface HookReport {
  name: string
  expected: number
  deliveredDistinct: number
  deliveries: { attempts: number; acked: number; refused: number; interrupted: number; deliveryIds: number }
  dropped: { failedBatches: number; failedEvents: number; bufferOverflow: number; overflowNotices: number }
  missing: string[]
  unexpected: string[]
  duplicates: { events: number; extraReceipts: number; batchesReacked: number }
  /** The application behind the kit: events it handled, how many more than once, acknowledged but never handled. */
  application: { handled: number; absorbed: number; handledTwice: string[]; ackedUnhandled: string[] }
  orderViolations: { event: string; after: string }[]
  concurrent: number
  badSignatures: number
  records: { retained: number; problems: string[] }
  metrics: { api: MetricTotals; receiver: MetricTotals; problems: string[] }
  violations: string[]
}

function typeMatches(pattern: string, type: string): boolean {
  return pattern.endsWith('.*') ? type.startsWith(pattern.slice(0, -1)) : pattern === type
}

const SCOPED = ['firewall.', 'package.', 'exception-request.']

/** The routing rule of the spec (6.1), written independently of the service's code. */
export function subscribed(hook: SoakWebhook, event: LoggedEvent['event'], ns: string): boolean {
  if (event.namespace !== ns || event.time < hook.createdAt) return false
  if (event.type.startsWith('webhook.')) return event.data?.webhook === hook.id
  if (!hook.eventTypes.some((pattern) => typeMatches(pattern, event.type))) return false
  if (hook.firewalls.length === 0 || !SCOPED.some((family) => event.type.startsWith(family))) return true
  return hook.firewalls.includes(event.data?.firewall)
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0)
}

export function checkHook(obs: Observations, hook: SoakWebhook): HookReport {
  const indexOf = new Map(obs.log.map((entry) => [entry.event.id, entry.index]))
  const expected = obs.log.filter((entry) => subscribed(hook, entry.event, obs.ns))
  const expectedIds = new Set(expected.map((entry) => entry.event.id))
  const attempts = obs.attempts.filter((a) => a.hook === hook.name).sort((a, b) => a.seq - b.seq)
  const violations: string[] = []

  // Acknowledged receipts per event; first arrival (any attempt) for the order check.
  const ackedCount = new Map<string, number>()
  const ackedDelivery = new Map<string, number>()
  const byDelivery = new Map<string, Attempt[]>()
  for (const attempt of attempts) {
    byDelivery.set(attempt.deliveryId, [...(byDelivery.get(attempt.deliveryId) ?? []), attempt])
    if (!attempt.acked) continue
    ackedDelivery.set(attempt.deliveryId, (ackedDelivery.get(attempt.deliveryId) ?? 0) + 1)
    for (const event of attempt.events) ackedCount.set(event.id, (ackedCount.get(event.id) ?? 0) + 1)
  }
  const orderViolations: HookReport['orderViolations'] = []
  const firstSeen = new Set<string>()
  let newest: { index: number; id: string } | null = null
  for (const attempt of attempts) {
    for (const event of attempt.events) {
      if (firstSeen.has(event.id)) continue
      firstSeen.add(event.id)
      const index = indexOf.get(event.id)
      if (index === undefined) continue // overflow notices are not in the event log
      if (newest && index < newest.index) orderViolations.push({ event: event.id, after: newest.id })
      if (!newest || index > newest.index) newest = { index, id: event.id }
    }
  }

  // Dropped: batches whose retries ran out (from the records), and overflow notices.
  const failed = obs.recordsSeen.filter((r) => r.hook === hook.name && r.status === 'failed')
  const failedIds = new Set<string>()
  for (const record of failed) {
    for (const attempt of byDelivery.get(record.id) ?? []) for (const event of attempt.events) failedIds.add(event.id)
    if (!byDelivery.has(record.id) && !record.payloadTruncated)
      for (const event of JSON.parse(record.payload).events) failedIds.add(event.id)
  }
  const notices = new Map<string, number>()
  // Only acknowledged notices count as reported: one seen in a refused attempt may be dropped later and re-reported.
  for (const attempt of attempts.filter((a) => a.acked)) {
    for (const event of attempt.events) {
      if (event.type === 'webhook.rate_limited' && event.data?.reason === 'buffer_overflow')
        notices.set(event.id, event.data.droppedEvents ?? 0)
    }
  }
  const bufferOverflow = sum([...notices.values()])

  const missing = [...expectedIds].filter((id) => !ackedCount.has(id) && !failedIds.has(id))
  if (missing.length > bufferOverflow)
    violations.push(
      `${missing.length} events neither delivered nor reported dropped (overflow reported ${bufferOverflow}), e.g. ${missing.slice(0, 3).join(', ')}`,
    )
  const unexpected = [...ackedCount.keys()].filter((id) => (indexOf.has(id) ? !expectedIds.has(id) : !notices.has(id)))
  if (unexpected.length)
    violations.push(
      `${unexpected.length} events delivered that the subscription does not match, e.g. ${unexpected.slice(0, 3).join(', ')}`,
    )
  if (orderViolations.length)
    violations.push(
      `${orderViolations.length} events arrived after a newer one, e.g. ${JSON.stringify(orderViolations[0])}`,
    )
  const concurrent = obs.overlaps.filter((o) => o.hook === hook.name).length
  if (concurrent) violations.push(`${concurrent} deliveries arrived while another was in flight`)
  const badSignatures = attempts.filter((a) => !a.verified).length
  if (badSignatures) violations.push(`${badSignatures} attempts whose signature did not verify`)

  const application = checkApplication(obs.handled.get(hook.name) ?? new Map(), ackedCount)
  violations.push(...application.problems)

  const records = checkRecords(obs.recordsNow.get(hook.name) ?? [], attempts, byDelivery)
  violations.push(...records.problems)
  const receiverTotals: MetricTotals = {
    deliveriesSuccess: attempts.filter((a) => a.acked).length,
    deliveriesFailed: attempts.filter((a) => a.answer === '500' || a.answer === '429' || a.answer === 'reset').length,
    eventsSent: sum(attempts.filter((a) => a.acked).map((a) => a.events.length)),
    eventsDropped: sum(failed.map((r) => r.eventCount)) + bufferOverflow,
  }
  const api = obs.metrics.get(hook.name) ?? {
    deliveriesSuccess: 0,
    deliveriesFailed: 0,
    eventsSent: 0,
    eventsDropped: 0,
  }
  const metricProblems = compareMetrics(
    api,
    receiverTotals,
    attempts.filter((a) => a.answer === 'interrupted').length,
    obs.kills,
  )
  violations.push(...metricProblems)

  const duplicates = {
    events: [...ackedCount.values()].filter((n) => n > 1).length,
    extraReceipts: sum([...ackedCount.values()].map((n) => n - 1)),
    batchesReacked: [...ackedDelivery.values()].filter((n) => n > 1).length,
  }
  return {
    name: hook.name,
    expected: expectedIds.size,
    deliveredDistinct: [...expectedIds].filter((id) => ackedCount.has(id)).length,
    deliveries: {
      attempts: attempts.length,
      acked: receiverTotals.deliveriesSuccess,
      refused: receiverTotals.deliveriesFailed,
      interrupted: attempts.filter((a) => a.answer === 'interrupted').length,
      deliveryIds: byDelivery.size,
    },
    dropped: {
      failedBatches: failed.length,
      failedEvents: sum(failed.map((r) => r.eventCount)),
      bufferOverflow,
      overflowNotices: notices.size,
    },
    missing,
    unexpected,
    duplicates,
    application: {
      handled: application.handled,
      absorbed: obs.absorbed.get(hook.name) ?? 0,
      handledTwice: application.handledTwice,
      ackedUnhandled: application.ackedUnhandled,
    },
    orderViolations,
    concurrent,
    badSignatures,
    records,
    metrics: { api, receiver: receiverTotals, problems: metricProblems },
    violations,
  }
}

/**
 * Every event handled exactly once by the application despite retries and kills: the sender
 * re-sends (retries, batches re-sent after a SIGKILL, attempts the receiver handled but never
 * answered), and the kit's dedupe must keep each event's handler from running twice. Every
 * acknowledged event was handled (the kit acknowledges only what it handled or had handled).
 */
function checkApplication(handled: Map<string, number>, ackedCount: Map<string, number>) {
  const handledTwice = [...handled].filter(([, times]) => times > 1).map(([id]) => id)
  const ackedUnhandled = [...ackedCount.keys()].filter((id) => !handled.has(id))
  const problems: string[] = []
  if (handledTwice.length)
    problems.push(
      `${handledTwice.length} events handled more than once by the application, e.g. ${handledTwice.slice(0, 3).join(', ')}`,
    )
  if (ackedUnhandled.length)
    problems.push(
      `${ackedUnhandled.length} events acknowledged but never handled by the application, e.g. ${ackedUnhandled.slice(0, 3).join(', ')}`,
    )
  return { handled: handled.size, handledTwice, ackedUnhandled, problems }
}

/**
 * The retained records against what the receiver saw: each names a delivery the receiver got at
 * least `attempts` times, success = acknowledged, failed = never acknowledged, nothing still
 * retrying after the drain, and the newest deliveries the receiver saw are the ones retained.
 */
function checkRecords(
  records: RecordView[],
  attempts: Attempt[],
  byDelivery: Map<string, Attempt[]>,
): { retained: number; problems: string[] } {
  const problems: string[] = []
  for (const record of records) {
    const seen = byDelivery.get(record.id) ?? []
    const acked = seen.some((a) => a.acked)
    if (seen.length === 0) problems.push(`record ${record.id} names a delivery the receiver never got`)
    else if (record.attempts > seen.length)
      problems.push(`record ${record.id} counts ${record.attempts} attempts, the receiver got ${seen.length}`)
    if (record.status === 'success' && !acked)
      problems.push(`record ${record.id} is success but the receiver never acknowledged it`)
    if (record.status === 'failed' && acked)
      problems.push(`record ${record.id} is failed but the receiver acknowledged it`)
    if (record.status === 'retrying') problems.push(`record ${record.id} still retrying after the drain`)
    const last = seen.at(-1)
    if (last && last.events.length !== record.eventCount)
      problems.push(
        `record ${record.id} has eventCount ${record.eventCount}, the receiver got ${last.events.length} events`,
      )
  }
  const order: string[] = []
  for (const attempt of attempts) if (!order.includes(attempt.deliveryId)) order.push(attempt.deliveryId)
  const retained = new Set(records.map((r) => r.id))
  const newest = order.slice(-Math.min(128, order.length))
  const absent = newest.filter((id) => !retained.has(id))
  if (absent.length)
    problems.push(
      `${absent.length} of the newest ${newest.length} deliveries the receiver got have no record, e.g. ${absent.slice(0, 3).join(', ')}`,
    )
  return { retained: records.length, problems }
}

/**
 * API metrics against the receiver. A SIGKILL may lose the bookkeeping of one answered attempt
 * per webhook, so the metrics may fall short of the receiver by at most the number of kills.
 */
function compareMetrics(api: MetricTotals, seen: MetricTotals, interrupted: number, kills: number): string[] {
  const problems: string[] = []
  const within = (name: keyof MetricTotals, low: number, high: number) => {
    const diff = seen[name] - api[name]
    if (diff < low || diff > high)
      problems.push(
        `metrics ${name} ${api[name]} vs receiver ${seen[name]} (allowed receiver - metrics in ${low}..${high})`,
      )
  }
  within('deliveriesSuccess', 0, kills)
  within('deliveriesFailed', -interrupted, kills)
  within('eventsSent', 0, kills * 100)
  if (api.eventsDropped < seen.eventsDropped - kills * 100 || api.eventsDropped > seen.eventsDropped + kills * 100) {
    problems.push(
      `metrics eventsDropped ${api.eventsDropped} vs ${seen.eventsDropped} reported by failed records and overflow notices`,
    )
  }
  return problems
}
