import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/**
 * The process's Prometheus metrics: a registry of our own (so nothing global leaks in) with
 * the default Node metrics. Other modules report through the small functions below; label
 * values are bounded by the callers (route templates, outcome kinds, configured hosts).
 */
const metricsRegistry = new Registry()
// GC pauses by 25 and 50 ms too: the cost suite tells a pause of the collector from a task holding the loop.
collectDefaultMetrics({ register: metricsRegistry, gcDurationBuckets: [0.001, 0.01, 0.025, 0.05, 0.1, 1, 2, 5] })

const registers = [metricsRegistry]
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
// Label values are cut short so a caller's slip cannot explode series or leak long text.
const label = (value: string) => String(value).slice(0, 80)

const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests by route template, method and status',
  labelNames: ['route', 'method', 'status'],
  registers,
})
const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by route template, method and status',
  labelNames: ['route', 'method', 'status'],
  buckets: LATENCY_BUCKETS,
  registers,
})
const deliveryAttempts = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome',
  labelNames: ['outcome'],
  registers,
})
const deliveryDuration = new Histogram({
  name: 'webhook_delivery_attempt_duration_seconds',
  help: 'Webhook delivery attempt duration by outcome',
  labelNames: ['outcome'],
  buckets: LATENCY_BUCKETS,
  registers,
})
const bufferedEvents = new Gauge({
  name: 'webhook_buffered_events',
  help: 'Events buffered for webhooks whose actors this process hosts',
  registers,
})
const actorStates = new Gauge({
  name: 'actors',
  help: 'Actors hosted by this process per machine and state',
  labelNames: ['machine', 'state'],
  registers,
})
const proxyDecisions = new Counter({
  name: 'registry_proxy_decisions_total',
  help: 'Registry proxy firewall decisions by phase and outcome',
  labelNames: ['phase', 'outcome'],
  registers,
})
const upstreamDuration = new Histogram({
  name: 'registry_upstream_request_duration_seconds',
  help: 'Upstream registry request duration by upstream host and result',
  labelNames: ['upstream', 'result'],
  buckets: LATENCY_BUCKETS,
  registers,
})
const upstreamErrors = new Counter({
  name: 'registry_upstream_errors_total',
  help: 'Upstream registry errors by upstream host and kind',
  labelNames: ['upstream', 'kind'],
  registers,
})
const leases = new Gauge({
  name: 'leases_owned',
  help: 'Leases this process holds, by kind',
  labelNames: ['kind'],
  registers,
})
const rateLimited = new Counter({
  name: 'rate_limited_requests_total',
  help: 'Requests answered 429 by the rate limiter, by scope',
  labelNames: ['scope'],
  registers,
})
const retentionTrimmed = new Counter({
  name: 'log_retention_trimmed_entries_total',
  help: 'Log entries removed by retention, by log kind',
  labelNames: ['log'],
  registers,
})
const retentionRuns = new Counter({
  name: 'log_retention_runs_total',
  help: 'Retention passes this process ran (it held the lease)',
  registers,
})
const advisoryLabels = ['ecosystem']
const advisoryRecords = new Gauge({
  name: 'advisory_records',
  help: 'Advisories loaded per ecosystem (feed and ADVISORY_DIR)',
  labelNames: advisoryLabels,
  registers,
})
const advisoryRefresh = new Gauge({
  name: 'advisory_last_refresh_timestamp_seconds',
  help: 'When the feed data was last confirmed current (0: never)',
  labelNames: advisoryLabels,
  registers,
})
const advisoryLoaded = new Gauge({
  name: 'advisory_data_loaded',
  help: '1 when rules of the ecosystem can decide, 0 while they fail closed',
  labelNames: advisoryLabels,
  registers,
})
const advisoryStale = new Gauge({
  name: 'advisory_data_stale',
  help: '1 when the data is missing or older than 3 x ADVISORY_REFRESH',
  labelNames: advisoryLabels,
  registers,
})
const advisoryError = new Gauge({
  name: 'advisory_refresh_error',
  help: '1 while the last feed refresh of the ecosystem failed',
  labelNames: advisoryLabels,
  registers,
})
const advisoryRefused = new Counter({
  name: 'advisory_refresh_refused_total',
  help: 'Advisory loads refused because they would shrink the data, skip over 1 % invalid entries, or hold no record or too many entries',
  labelNames: ['ecosystem', 'source'],
  registers,
})
const advisorySource = new Gauge({
  name: 'advisory_source_info',
  help: 'Where the data of an ecosystem comes from (value 1)',
  labelNames: ['ecosystem', 'source'],
  registers,
})

/** Collectors run before every scrape, e.g. to refresh gauges from an actor host. */
const collectors = new Set<() => void | Promise<void>>()

/** Records one HTTP request; `route` is a template such as `/v1/{ns}/config/{fw}`. */
export function observeHttpRequest(route: string, method: string, status: number, seconds: number): void {
  const labels = { route: label(route), method: label(method), status: String(status) }
  httpRequests.inc(labels)
  httpDuration.observe(labels, seconds)
}

/**
 * Records one webhook delivery attempt.
 * @example observeDeliveryAttempt('success', 0.12) // outcomes: success | retryable | permanent | timeout ...
 */
export function observeDeliveryAttempt(outcome: string, seconds: number): void {
  deliveryAttempts.inc({ outcome: label(outcome) })
  deliveryDuration.observe({ outcome: label(outcome) }, seconds)
}

/** Sets the number of events buffered for the webhooks this process hosts. */
export function setBufferedEvents(count: number): void {
  bufferedEvents.set(count)
}

/** Sets how many actors of `machine` this process hosts in `state`. */
function setActorStateGauge(machine: string, state: string, count: number): void {
  actorStates.set({ machine: label(machine), state: label(state) }, count)
}

/** Replaces every state count of `machine` at once: states missing from `counts` drop to 0. */
export function setActorStates(machine: string, counts: Record<string, number>): void {
  const previous = knownStates.get(machine) ?? new Set<string>()
  for (const state of previous) if (!(state in counts)) setActorStateGauge(machine, state, 0)
  for (const [state, count] of Object.entries(counts)) setActorStateGauge(machine, state, count)
  knownStates.set(machine, new Set([...previous, ...Object.keys(counts)]))
}
const knownStates = new Map<string, Set<string>>()

/** Counts one proxy decision, e.g. `observeProxyDecision('download', 'blocked')`. */
export function observeProxyDecision(phase: string, outcome: string): void {
  proxyDecisions.inc({ phase: label(phase), outcome: label(outcome) })
}

/**
 * Upstream hosts get a series each, kept for the life of the process, and firewall configurations
 * name any host they like: past this many distinct hosts, the rest share the `other` series (#30).
 */
export const UPSTREAM_HOST_LABELS = 200
const upstreamHosts = new Set<string>()

function upstreamLabel(host: string): string {
  const value = label(host)
  if (upstreamHosts.has(value)) return value
  if (upstreamHosts.size >= UPSTREAM_HOST_LABELS) return 'other'
  upstreamHosts.add(value)
  return value
}

/**
 * Records one upstream request; `error` is a short kind (`timeout`, `connect`, `status_5xx`)
 * or null/undefined on success. Pass the host only, never a URL with credentials or a path.
 */
export function observeUpstream(upstreamHost: string, seconds: number, error?: string | null): void {
  const upstream = upstreamLabel(upstreamHost)
  upstreamDuration.observe({ upstream, result: error ? 'error' : 'ok' }, seconds)
  if (error) upstreamErrors.inc({ upstream, kind: label(error) })
}

/** Sets how many leases of `kind` this process holds (webhook actors, retention). */
export function setLeaseOwnership(count: number, kind = 'webhook'): void {
  leases.set({ kind: label(kind) }, count)
}

/** Counts one request refused by the rate limiter. */
export function observeRateLimited(scope: string): void {
  rateLimited.inc({ scope: label(scope) })
}

/** Counts one retention pass and the entries it removed per log kind. */
export function observeRetentionRun(removedByKind: Record<string, number>): void {
  retentionRuns.inc()
  for (const [kind, removed] of Object.entries(removedByKind)) retentionTrimmed.inc({ log: label(kind) }, removed)
}

/** One ecosystem's advisory figures, as `GET /v1/{ns}/advisories/status` reports them. */
interface AdvisoryGaugeRow {
  ecosystem: string
  source: string
  records: number
  lastRefresh: string | null
  loaded: boolean
  stale: boolean
  lastError: unknown
}

/** Sets the advisory gauges from the status rows (the source series of a changed source is dropped). */
export function setAdvisoryGauges(rows: AdvisoryGaugeRow[]): void {
  advisorySource.reset()
  for (const row of rows) {
    const labels = { ecosystem: label(row.ecosystem) }
    advisoryRecords.set(labels, row.records)
    advisoryRefresh.set(labels, row.lastRefresh ? Date.parse(row.lastRefresh) / 1000 : 0)
    advisoryLoaded.set(labels, row.loaded ? 1 : 0)
    advisoryStale.set(labels, row.stale ? 1 : 0)
    advisoryError.set(labels, row.lastError ? 1 : 0)
    advisorySource.set({ ...labels, source: label(row.source) }, 1)
  }
}

/**
 * Registers a callback run before each scrape; returns its removal.
 * @example onMetricsCollect(() => setBufferedEvents(host.bufferedTotal()))
 */
export function onMetricsCollect(callback: () => void | Promise<void>): () => void {
  collectors.add(callback)
  return () => collectors.delete(callback)
}

/** The Prometheus text exposition, after refreshing the callback-fed gauges. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  // A failing collector must not break the scrape; its gauges just keep their last value.
  await Promise.all(
    [...collectors].map(async (collect) => {
      try {
        await collect()
      } catch {
        /* stale gauge */
      }
    }),
  )
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() }
}

/**
 * Counts one advisory load refused (advisories/refresh-guard.ts); `ecosystem` is `all` for
 * ADVISORY_DIR, whose files mix ecosystems; `source` is `feed`, `file` or `directory`.
 */
export function observeAdvisoryRefusal(ecosystem: string, source: string): void {
  advisoryRefused.inc({ ecosystem: label(ecosystem), source: label(source) })
}
