/** A webhook as stored (docs/webhooks.md plus rotation and quarantine bookkeeping). */
export interface WebhookRecord {
  id: string
  namespace: string
  name: string
  url: string
  enabled: boolean
  eventTypes: string[]
  firewalls: string[]
  /** Deliveries per second asked for by the receiver; absent means the global `WEBHOOK_RATE`. */
  rateLimit?: number
  /** Custom request headers sent on every attempt (custom-headers.ts). */
  headers?: Record<string, string>
  secret: string
  /** The secret before the last rotation; still signs until `previousSecretValidUntil`. */
  previousSecret?: string
  previousSecretValidUntil?: string
  secretRotatedAt?: string
  quarantinedAt?: string
  quarantinedUntil?: string
  releasedAt?: string
  /**
   * When the webhook was disabled, latest last (an open span while it is disabled): events of
   * those times never enter its buffer, events from before stay buffered (routing.ts). Internal.
   */
  pausedSpans?: PausedSpan[]
  createdAt: string
  updatedAt: string
}

/** A time span (ISO times, `until` absent while it lasts) in which a webhook was disabled. */
export interface PausedSpan {
  from: string
  until?: string
}
