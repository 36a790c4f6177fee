import type { Services } from '../../app/services'
import { logger } from '../../app/logger'
import { makeEvent } from '../../events/factory'
import type { NamespaceEvent } from '../../events/schemas'
import { webhookRef } from '../../../storage/repositories/webhook-keys'
import { Activity } from './activity'
import { pushToBuffer } from './buffer-push'
import { matchesWebhook } from '../configuration/event-types'
import type { WebhookRecord } from '../configuration/model'
import type { WebhookRuntime } from './runtime'

export interface RouterOptions {
  /** Lease owner id of this process. */
  owner: string
  leaseTtlMs: number
  /** Event-log entries read per pass. */
  pageSize?: number
}

/**
 * Follows the namespace event log and appends each event to the buffer of every webhook it
 * matches. One router runs in the cluster (a renewed lease); it persists its cursor after the
 * buffers were written, so a crash re-routes at most one page (at-least-once).
 */
export class EventRouter {
  private readonly activity = new Activity()
  private running: Promise<void> | null = null
  private again = false
  private stopped = false

  constructor(
    private readonly services: Services,
    private readonly runtime: WebhookRuntime,
    private readonly options: RouterOptions,
  ) {}

  /** Requests a pass; passes never overlap, and a request during a pass runs one more. */
  wake(): void {
    if (this.stopped) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = this.activity.track(
      this.drain()
        .catch((error) => logger.error('webhook routing failed', { error: String(error) }))
        .finally(() => {
          this.running = null
          if (this.again) {
            this.again = false
            this.wake()
          }
        }),
    )
  }

  /** Waits until no pass is running. */
  idle(): Promise<void> {
    return this.activity.idle()
  }

  /** Stops routing and gives the lease up so another process can take over at once. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.activity.idle()
    await this.services.leases.webhookRouter().release(this.options.owner).catch(() => undefined)
  }

  private async drain(): Promise<void> {
    const { events, leases } = this.services
    const pageSize = this.options.pageSize ?? 2_000
    let cursor = await this.runtime.webhooks.routerCursor()
    for (;;) {
      // Renewed every page: a long backlog must not let the lease lapse mid-way.
      if (this.stopped || !(await leases.webhookRouter().acquire(this.options.owner, this.options.leaseTtlMs))) return
      const entries = await events.read<NamespaceEvent>(cursor, pageSize)
      if (entries.length === 0) return
      await this.route(entries.map((entry) => entry.value))
      cursor = entries[entries.length - 1].cursor
      await this.runtime.webhooks.saveRouterCursor(cursor)
      if (entries.length < pageSize) return
    }
  }

  /** Routes one page: buffers first, then the wake-up signal for the delivery actors. */
  private async route(events: NamespaceEvent[]): Promise<void> {
    const byWebhook = new Map<string, { webhook: WebhookRecord; events: NamespaceEvent[] }>()
    const webhooksOf = new Map<string, Promise<WebhookRecord[]>>()
    for (const event of events) {
      if (!webhooksOf.has(event.namespace)) webhooksOf.set(event.namespace, this.runtime.webhooks.list(event.namespace))
      for (const webhook of await webhooksOf.get(event.namespace)!) {
        if (!routes(event, webhook)) continue
        const ref = webhookRef(webhook.namespace, webhook.id)
        if (!byWebhook.has(ref)) byWebhook.set(ref, { webhook, events: [] })
        byWebhook.get(ref)!.events.push(event)
      }
    }
    await Promise.all([...byWebhook.values()].map(({ webhook, events: matched }) => this.append(webhook, matched)))
    await this.runtime.signals.publish({ kind: 'buffered', refs: [...byWebhook.keys()] })
  }

  private async append(webhook: WebhookRecord, events: NamespaceEvent[]): Promise<void> {
    const { clock } = this.services
    const pushed = await pushToBuffer(this.runtime.webhooks, webhook.namespace, webhook.id, events, this.runtime.settings.bufferSize, (counts) =>
      makeEvent(clock, webhook.namespace, 'webhook.rate_limited', { webhook: webhook.id, reason: 'buffer_overflow', ...counts }),
    )
    if (pushed.dropped > 0) {
      logger.warn('webhook buffer overflow', { webhook: webhook.id, namespace: webhook.namespace, dropped: pushed.dropped, buffered: pushed.length })
      await this.runtime.records.addMetrics(webhook.namespace, webhook.id, clock.now(), { eventsDropped: pushed.dropped })
    }
  }
}

/**
 * Whether an event goes into a webhook's buffer: subscription match (system events always),
 * but a system event only to the webhook it is about, and nothing from before the webhook existed.
 */
function routes(event: NamespaceEvent, webhook: WebhookRecord): boolean {
  if (event.time < webhook.createdAt) return false
  if (event.type.startsWith('webhook.') && (event.data as { webhook?: string }).webhook !== webhook.id) return false
  return matchesWebhook(event, webhook)
}
