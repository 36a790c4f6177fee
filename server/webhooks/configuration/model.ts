import { z } from 'zod'
import { ClientId } from '../../common/ids'
import { WebhookConfigSnapshot } from '../../events/schemas'
import { CustomHeaders, redactCustomHeaders } from './custom-headers'
import type { PausedSpan, WebhookRecord } from '../../../storage/model/webhook'

/** Placeholder shown instead of a signing secret in lists and reads. */
export const REDACTED = '[REDACTED]'

export type { PausedSpan, WebhookRecord } from '../../../storage/model/webhook'

/** Spans kept; an older one only matters to events its cursor passed long ago. */
const PAUSED_SPANS_KEPT = 20

/**
 * The spans after an update at `now`: disabling opens one, enabling closes the open one.
 * @example pausedSpansAfter([], false, '2026-01-01T00:00:00.000Z') // [{ from: '2026-01-01T00:00:00.000Z' }]
 */
export function pausedSpansAfter(
  spans: readonly PausedSpan[] | undefined,
  enabled: boolean,
  now: string,
): PausedSpan[] {
  const list = [...(spans ?? [])]
  const open = list.length > 0 && list[list.length - 1].until === undefined
  if (!enabled && !open) list.push({ from: now })
  if (enabled && open) list[list.length - 1] = { ...list[list.length - 1], until: now }
  return list.slice(-PAUSED_SPANS_KEPT)
}

/** Body of create and update. Read-only fields a client echoes back from GET are accepted and ignored. */
export const WebhookInput = z
  .object({
    id: ClientId.optional(),
    name: z.string().min(1).max(200),
    url: z.string().min(1).max(2048),
    enabled: z.boolean().default(true),
    eventTypes: z.array(z.string().max(200)).max(100),
    firewalls: z.array(ClientId).max(100).default([]),
    /** At most `WEBHOOK_RATE` (checked with the settings); below 1 spaces deliveries out (0.5 = one per 2 s). */
    rateLimit: z.number().min(0.01).max(1000).optional(),
    /** Count and reserved names are checked by the service (custom-headers.ts), with paths naming the header. */
    headers: CustomHeaders.optional(),
    secret: z.string().optional(),
    createdAt: z.string().optional(),
    updatedAt: z.string().optional(),
    secretRotatedAt: z.string().optional(),
    previousSecretValidUntil: z.string().optional(),
    quarantinedAt: z.string().optional(),
    quarantinedUntil: z.string().optional(),
    releasedAt: z.string().optional(),
  })
  .strict()
export type WebhookInput = z.infer<typeof WebhookInput>

/** A webhook in API answers; `secret` is the placeholder unless `revealSecret`. */
export const WebhookView = WebhookConfigSnapshot.extend({
  secret: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
})
export type WebhookView = z.infer<typeof WebhookView>

const OPTIONAL_TIMES = [
  'secretRotatedAt',
  'previousSecretValidUntil',
  'quarantinedAt',
  'quarantinedUntil',
  'releasedAt',
] as const

function optionalTimes(record: WebhookRecord): Partial<Record<(typeof OPTIONAL_TIMES)[number], string>> {
  return Object.fromEntries(OPTIONAL_TIMES.filter((field) => record[field]).map((field) => [field, record[field]!]))
}

/**
 * The API view of a stored webhook: never the previous secret, the current one only when asked.
 * @example webhookView(record).secret // '[REDACTED]'
 */
export function webhookView(record: WebhookRecord, revealSecret = false): WebhookView {
  const { id, name, url, enabled, eventTypes, firewalls, ...rest } = configSnapshot(record)
  return {
    id,
    name,
    url,
    enabled,
    eventTypes,
    firewalls,
    secret: revealSecret ? record.secret : REDACTED,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...rest,
  }
}

/** The `config` of `config.webhook.*` events: no field for any secret exists in it; header values are redacted. */
export function configSnapshot(record: WebhookRecord): z.infer<typeof WebhookConfigSnapshot> {
  return {
    id: record.id,
    name: record.name,
    url: record.url,
    enabled: record.enabled,
    eventTypes: record.eventTypes,
    firewalls: record.firewalls,
    ...(record.rateLimit === undefined ? {} : { rateLimit: record.rateLimit }),
    ...(record.headers && Object.keys(record.headers).length
      ? { headers: redactCustomHeaders(record.headers, REDACTED) }
      : {}),
    ...optionalTimes(record),
  }
}

/** Secrets that sign a delivery at `now`: the current one, plus the previous one during the overlap. */
export function signingSecrets(record: WebhookRecord, now: number): string[] {
  const overlap =
    record.previousSecret && record.previousSecretValidUntil && Date.parse(record.previousSecretValidUntil) > now
  return overlap ? [record.secret, record.previousSecret!] : [record.secret]
}
