import { z } from 'zod'
import { Ecosystem, Severity } from '../firewall/schema'
import type { StoredEvent } from '../../storage/model/events'

/**
 * The data of every event type. These schemas are the single source for the
 * published JSON Schema document (`/schemas/webhook-events-v1.json`) and for the types the
 * code emits. Fields the spec marks "when set" are optional and omitted when empty.
 */

/** Actor object: every field omitted when empty. */
export const Actor = z.object({
  userId: z.string().optional(),
  tokenIdentifier: z.string().optional(),
  requestId: z.string().optional(),
  remoteAddress: z.string().optional(),
  userAgent: z.string().optional(),
})
export type Actor = z.infer<typeof Actor>

export const FirewallDecisionData = z.object({
  firewall: z.string(),
  firewallVersion: z.number().int(),
  executionPhase: z.enum(['download', 'upload']),
  blocked: z.boolean(),
  ecosystem: Ecosystem,
  packageName: z.string(),
  version: z.string(),
  upstream: z.string(),
  rule: z.string(),
  user: z.string(),
  request: z.string(),
  message: z.string(),
  source: z.string().optional(),
  sourceFirewall: z.string().optional(),
  sourceFirewallVersion: z.number().int().optional(),
  exception: z.string().optional(),
  exceptionSourceFirewall: z.string().optional(),
  exceptionSourceFirewallVersion: z.number().int().optional(),
  published: z.string().optional(),
  output: z.record(z.string(), z.unknown()).optional(),
  interaction: z.string().optional(),
  userAgent: z.string().optional(),
  remoteAddress: z.string().optional(),
})
export type FirewallDecisionData = z.infer<typeof FirewallDecisionData>

export const AuditData = z.object({
  action: z.string(),
  outcome: z.enum(['success', 'failure']),
  statusCode: z.number().int(),
  resourceType: z.string().optional(),
  resourceId: z.string().optional(),
  actorUserId: z.string().optional(),
  actorTokenIdentifier: z.string().optional(),
  requestId: z.string().optional(),
  interactionId: z.string().optional(),
  remoteAddr: z.string().optional(),
  userAgent: z.string().optional(),
  requestMethod: z.string().optional(),
  requestPath: z.string().optional(),
  errorMessage: z.string().optional(),
  eventData: z.record(z.string(), z.unknown()).optional(),
})
export type AuditData = z.infer<typeof AuditData>

export const ConfigFirewallData = z.object({
  firewall: z.string(),
  version: z.number().int(),
  ecosystem: Ecosystem,
  actor: Actor,
  /** Complete redacted firewall configuration after the change (last known on delete). */
  config: z.record(z.string(), z.unknown()),
})

export const WebhookConfigSnapshot = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  enabled: z.boolean(),
  eventTypes: z.array(z.string()),
  firewalls: z.array(z.string()),
  /** Deliveries per second the webhook asked for; absent = the operator's `WEBHOOK_RATE`. */
  rateLimit: z.number().optional(),
  /** Custom request header names; every value is `[REDACTED]`. */
  headers: z.record(z.string(), z.string()).optional(),
  secretRotatedAt: z.string().optional(),
  previousSecretValidUntil: z.string().optional(),
  quarantinedAt: z.string().optional(),
  quarantinedUntil: z.string().optional(),
  releasedAt: z.string().optional(),
})

export const ConfigWebhookData = z.object({
  webhook: z.string(),
  actor: Actor,
  config: WebhookConfigSnapshot,
})

export const PackageData = z.object({
  firewall: z.string(),
  ecosystem: Ecosystem,
  packageName: z.string(),
  version: z.string(),
  actor: Actor,
  upstream: z.string().optional(),
  /** Spec 6.5: the upload request path below the firewall prefix (Maven, PyPI), as the client sent it. */
  file: z.string().optional(),
})

export const ExceptionRequestData = z.object({
  firewall: z.string(),
  ecosystem: Ecosystem,
  actor: Actor,
  request: z.record(z.string(), z.unknown()),
  dashboardUrl: z.string().optional(),
})

export const WebhookRateLimitedData = z.object({
  webhook: z.string(),
  reason: z.enum(['buffer_overflow', 'rate_limited']),
  droppedEvents: z.number().int(),
  bufferedEvents: z.number().int(),
})

export const WebhookTestData = z.object({
  webhook: z.string(),
  message: z.literal('Test event'),
})

/** The advisory an exposure names (CONTRACT section 3, exposures). */
export const ExposureAdvisory = z.object({
  id: z.string(),
  aliases: z.array(z.string()),
  kind: z.enum(['malware', 'vulnerability']),
  severity: Severity.optional(),
})

/**
 * A served version that advisory data named after it was served, as `GET /v1/{ns}/exposures`
 * shows it: the `firewall.exposure` data.
 */
export const ExposureData = z.object({
  id: z.string().describe('`exp-...`, one per firewall, version and advisory'),
  firewall: z.string(),
  ecosystem: Ecosystem,
  packageName: z.string(),
  version: z.string(),
  advisory: ExposureAdvisory,
  firstServedAt: z.string(),
  lastServedAt: z.string(),
  servedTo: z
    .array(z.string())
    .describe('principal ids the firewall served the version to, newest first (at most 100)'),
  detectedAt: z.string(),
  status: z.enum(['open', 'acknowledged']),
  acknowledgedAt: z.string().optional(),
  acknowledgedBy: z.string().optional(),
  comment: z.string().optional(),
})
export type ExposureData = z.infer<typeof ExposureData>

/** Fixed event types and the schema of their data; `audit.<action>` is open-ended. */
export const EVENT_DATA_SCHEMAS = {
  'firewall.blocked': FirewallDecisionData,
  'firewall.exception-allowed': FirewallDecisionData,
  'firewall.allowed': FirewallDecisionData,
  'firewall.exposure': ExposureData,
  'config.firewall.created': ConfigFirewallData,
  'config.firewall.updated': ConfigFirewallData,
  'config.firewall.deleted': ConfigFirewallData,
  'config.webhook.created': ConfigWebhookData,
  'config.webhook.updated': ConfigWebhookData,
  'config.webhook.deleted': ConfigWebhookData,
  'package.published': PackageData,
  'package.unlisted': PackageData,
  'exception-request.created': ExceptionRequestData,
  'exception-request.approved': ExceptionRequestData,
  'exception-request.denied': ExceptionRequestData,
  'exception-request.withdrawn': ExceptionRequestData,
  'webhook.rate_limited': WebhookRateLimitedData,
  'webhook.test': WebhookTestData,
} as const

export type FixedEventType = keyof typeof EVENT_DATA_SCHEMAS
export type EventType = FixedEventType | `audit.${string}`

/** One event as stored in the event log (storage/model/events.ts) and delivered in the envelope. */
export type NamespaceEvent<D = Record<string, unknown>> = StoredEvent<EventType, D>
