/**
 * Types shared by the webhook delivery machine and the adapters that implement its actors.
 * Everything here is JSON-serialisable: it lives in persisted snapshots.
 */

/** Result of one POST, as data (docs/webhooks.md fields of the last attempt). */
export interface AttemptOutcome {
  kind: 'success' | 'failure'
  /** HTTP status; 0 when no response arrived (network error, timeout, refused address). */
  responseStatus: number
  /** First 4 KB of the response body, decoded as UTF-8. */
  responseBody: string
  /** Transport error or reason the response counted as failed; absent on success. */
  error?: string
  durationMillis: number
  /** Retry-After in ms, only on 429/503 and capped at 1 h. */
  retryAfterMs?: number
}

/** Input of every wait: an absolute deadline (ms since epoch), never a relative delay. */
export interface DeadlineInput {
  deadline: number
}

/** Sent to the parent when the deadline has passed; carries the clock's time then. */
export interface DeadlineReachedEvent {
  type: 'DEADLINE_REACHED'
  now: number
}

/** The settings a delivery machine needs (a subset of `WebhookSettings`). */
export interface DeliverySettings {
  retryScheduleMs: number[]
  quarantineMs: number
  /** Attempts started per second, at most. */
  rate: number
  /** Backlog above which pacing is reported as `webhook.rate_limited` (1000). */
  backlogNoticeThreshold: number
}

export interface DeliveryMachineInput {
  webhookId: string
  /** Time at creation, ms epoch (the machine never reads a clock itself). */
  now: number
  settings: DeliverySettings
  /** Events already waiting in storage when the actor starts. */
  bufferedEvents?: number
}

/** The batch being delivered: fixed at its first attempt, reused for every retry. */
export interface BatchInFlight {
  deliveryId: string
  eventIds: string[]
  /** Attempts finished so far. */
  attempts: number
  createdAt: number
}

/**
 * The webhook's own settings its actor follows (null: none set). They reach the actor by one
 * channel, the `SETTINGS_CHANGED` event the host sends when the stored document differs from the
 * actor's context (server/webhooks/delivery/document-sync.ts).
 */
export interface WebhookActorSettings {
  /** Attempts per second, never above the operator's `rate`; null = `settings.rate`. */
  rateLimit: number | null
}

/** `WebhookActorSettings` live at the top of the context; absent in older snapshots = null. */
export interface DeliveryContext extends Partial<WebhookActorSettings> {
  webhookId: string
  settings: DeliverySettings
  /** Latest time reported by any event; the machine's notion of "now". */
  now: number
  /** Events in storage waiting for delivery, the batch in flight included. */
  bufferedEvents: number
  batch: BatchInFlight | null
  /** Absolute deadlines (ms epoch) of the current wait, null when not waiting on it. */
  nextAttemptAt: number | null
  pacedUntil: number | null
  quarantinedUntil: number | null
  /** Start times of the latest `rate` attempts, oldest first (sliding pacing window). */
  recentStarts: number[]
  lastOutcome: AttemptOutcome | null
  /** Set once a `rate_limited` notice went out for the current backlog episode. */
  rateLimitedNoticeSent: boolean
  /** The webhook is disabled: nothing is taken or sent, events stay buffered (absent in older snapshots = false). */
  disabled?: boolean
}

/** Input of the `takeBatch` actor: pick the next batch from storage and give it a delivery id. */
export interface TakeBatchInput {
  webhookId: string
  /**
   * Whether the first attempt of a batch taken now is also its last (a retry schedule of one
   * attempt): the take starts that attempt itself (server/webhooks/delivery/adapter.ts).
   * Absent in snapshots stored before it existed.
   */
  firstAttemptIsLast?: boolean
}

/** Output of `takeBatch`: `batch` null when the buffer turned out empty, or when the webhook is disabled. */
export interface TakeBatchOutput {
  batch: { deliveryId: string; eventIds: string[] } | null
  bufferedEvents: number
  now: number
  /** True when the webhook document says disabled: nothing was taken. */
  disabled?: boolean
}

/** Input of the `deliverBatch` actor: one attempt of a fixed batch. */
export interface DeliverBatchInput {
  webhookId: string
  deliveryId: string
  /** 1-based attempt number. */
  attempt: number
  eventIds: string[]
  /** True when a failure of this attempt ends the batch as `failed`. */
  lastAttempt: boolean
}

/** Output of `deliverBatch`: one attempt's outcome. */
export interface AttemptReport {
  outcome: AttemptOutcome
  startedAt: number
  finishedAt: number
  /** Events left in storage afterwards, when the adapter knows. */
  bufferedEvents?: number
}

export type DeliveryEvent =
  | { type: 'EVENTS_BUFFERED'; bufferedEvents: number; now: number }
  | { type: 'RELEASE'; now: number }
  /** The webhook document's `enabled` changed (the host reconciles it with storage). */
  | { type: 'DISABLED'; now: number }
  | { type: 'ENABLED'; now: number }
  /** The webhook document's own settings differ from the actor's (document-sync.ts). */
  | { type: 'SETTINGS_CHANGED'; settings: WebhookActorSettings; now: number }
  | { type: 'DEADLINE_REACHED'; now: number }

/** Facts the machine emits for bookkeeping (delivery records, metrics, system events, logs). */
export type DeliveryEmitted =
  | {
      type: 'delivery.attempted'
      webhookId: string
      deliveryId: string
      attempt: number
      status: 'retrying' | 'success' | 'failed'
      eventIds: string[]
      report: AttemptReport
      nextAttemptAt: number | null
    }
  | { type: 'delivery.succeeded'; webhookId: string; deliveryId: string; eventIds: string[]; attempts: number }
  | { type: 'delivery.failed'; webhookId: string; deliveryId: string; droppedEvents: string[]; attempts: number }
  | { type: 'webhook.quarantined'; webhookId: string; quarantinedUntil: number }
  | { type: 'webhook.released'; webhookId: string; reason: 'expired' | 'manual'; now: number }
  | { type: 'webhook.rate_limited'; webhookId: string; bufferedEvents: number; now: number }
