import { createBackend, type BackendOptions, type LogEntry } from '../../storage'
import { keys } from '../../storage/repositories/keys'
import type { NamespaceEvent } from '../../server/events/schemas'
import { apiClient } from '../../test/support/server'
import type { Cluster } from './cluster'
import { NS, type SoakWebhook } from './setup'

/** A delivery record as the API shows it. */
export interface RecordView {
  id: string
  status: 'retrying' | 'success' | 'failed'
  attempts: number
  eventCount: number
  payload: string
  payloadTruncated: boolean
  createdAt: string
}

export interface MetricTotals {
  deliveriesSuccess: number
  deliveriesFailed: number
  eventsSent: number
  eventsDropped: number
}

/** A logged event and its position in the event log (the order webhooks must keep). */
export interface LoggedEvent {
  index: number
  event: NamespaceEvent<Record<string, any>>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Every entry of the soak namespace's event log, oldest first (read straight from the servers' storage and prefix). */
export async function readEventLog(storage: BackendOptions): Promise<LoggedEvent[]> {
  const backend = await createBackend(storage)
  try {
    const out: LoggedEvent[] = []
    let after: string | null = null
    for (;;) {
      const page: LogEntry<NamespaceEvent<Record<string, any>>>[] = await backend.logs.range(keys.eventLog(NS), {
        after,
        limit: 5_000,
      })
      for (const entry of page) out.push({ index: out.length, event: entry.value })
      if (page.length < 5_000) return out
      after = page[page.length - 1].cursor
    }
  } finally {
    await backend.close()
  }
}

/**
 * Polls every webhook's delivery records (the API keeps the last 128) during the run, so failed
 * batches are known even after their record was pushed out; `latest` holds the last answer.
 */
export class RecordWatcher {
  /** Every record ever seen, by delivery id (latest version). */
  readonly seen = new Map<string, RecordView & { hook: string }>()
  /** The last full answer per webhook (what the API retains now). */
  readonly latest = new Map<string, RecordView[]>()
  private running = false
  private loop: Promise<void> = Promise.resolve()

  constructor(
    private readonly cluster: Cluster,
    private readonly token: string,
    private readonly webhooks: SoakWebhook[],
  ) {}

  start(everyMs = 4_000): void {
    this.running = true
    this.loop = (async () => {
      while (this.running) {
        await this.poll().catch(() => undefined)
        await sleep(everyMs)
      }
    })()
  }

  async stop(): Promise<void> {
    this.running = false
    await this.loop
  }

  async poll(): Promise<void> {
    for (const hook of this.webhooks) {
      const api = apiClient(await this.cluster.pickUrl(), this.token)
      const response = await api('GET', `/v1/${NS}/webhooks/${hook.id}/deliveries?limit=128`)
      if (response.status !== 200) continue
      const records = response.body as RecordView[]
      this.latest.set(hook.name, records)
      for (const record of records) this.seen.set(record.id, { ...record, hook: hook.name })
    }
  }
}

/** Per-webhook metric totals over the run (1-minute buckets from `since`). */
export async function metricTotals(
  cluster: Cluster,
  token: string,
  hook: SoakWebhook,
  since: number,
): Promise<MetricTotals> {
  const api = apiClient(await cluster.pickUrl(), token)
  const from = new Date(Math.floor(since / 60_000) * 60_000 - 60_000).toISOString()
  const until = new Date(Date.now() + 60_000).toISOString()
  const response = await api('GET', `/v1/${NS}/webhooks/${hook.id}/metrics?bucket=1m&since=${from}&until=${until}`)
  if (response.status !== 200)
    throw new Error(`metrics of ${hook.name}: ${response.status} ${JSON.stringify(response.body)}`)
  const totals: MetricTotals = { deliveriesSuccess: 0, deliveriesFailed: 0, eventsSent: 0, eventsDropped: 0 }
  for (const bucket of response.body.buckets as Record<string, number>[]) {
    for (const key of Object.keys(totals) as (keyof MetricTotals)[]) totals[key] += Number(bucket[key] ?? 0)
  }
  return totals
}

/** The stored delivery state of a webhook (`GET .../state`). */
export async function webhookState(
  cluster: Cluster,
  token: string,
  hook: SoakWebhook,
): Promise<{ state: string; bufferedEvents: number } | null> {
  try {
    const response = await apiClient(await cluster.pickUrl(), token)('GET', `/v1/${NS}/webhooks/${hook.id}/state`)
    return response.status === 200 ? response.body : null
  } catch {
    return null
  }
}
