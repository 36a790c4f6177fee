import type { WebhookCall } from '../ports'
import { conflict, invalid, notFound, type FieldError } from '../../common/errors'
import { newId } from '../../common/ids'
import { makeEvent } from '../../events/factory'
import type { EventType } from '../../events/schemas'
import { requireNamespacePermission } from '../../auth/permissions'
import { actorOfCall, nowIso } from '../../auth/call-context'
import { webhookRef } from '../../../storage/repositories/webhook-keys'
import { validateEventTypes } from './event-types'
import {
  configSnapshot,
  pausedSpansAfter,
  REDACTED,
  webhookView,
  type WebhookInput,
  type WebhookRecord,
  type WebhookView,
} from './model'
import { mergeCustomHeaders, placeholdersForNewOrigin, validateCustomHeaders } from './custom-headers'
import { generateSecret } from '../protocol/signing'
import { resolveAndCheck } from '../protocol/ssrf'

/** Webhook create, read, update and delete; the delivery side is in delivery-control.ts, the secret in secret.ts. */

/** The `config.webhook.*` event of a change, in the same transaction as the change. */
export function configEvent(ctx: WebhookCall, type: EventType, record: WebhookRecord) {
  return makeEvent(ctx.services.clock, ctx.ns, type, {
    webhook: record.id,
    actor: actorOfCall(ctx),
    config: configSnapshot(record),
  })
}

/** Loads a webhook of the caller's namespace or throws 404. */
export async function loadWebhook(ctx: WebhookCall, id: string): Promise<WebhookRecord> {
  const record = await ctx.services.webhooks.get(ctx.ns, id)
  if (!record) throw notFound('webhook', id)
  return record
}

/**
 * The subscription rules (docs/webhooks.md), the URL policy (scheme, rejected domains, public address at resolution)
 * and the firewall scope. Firewalls already selected by `current` stay acceptable after their
 * deletion, so a deleted firewall never blocks a later edit.
 */
async function validateInput(ctx: WebhookCall, body: WebhookInput, current: WebhookRecord | null): Promise<void> {
  const runtime = ctx.services.webhookRuntime
  const errors: FieldError[] = [...validateEventTypes(body.eventTypes)]
  let code = 'validation_failed'
  const url = await resolveAndCheck(body.url, runtime.settings, runtime.lookup)
  if (!url.ok) {
    errors.push({ path: 'url', message: url.message })
    if (errors.length === 1) code = url.code
  }
  const known = new Set([
    ...(await ctx.services.firewalls.list(ctx.ns)).map((fw) => fw.id),
    ...(current?.firewalls ?? []),
  ])
  body.firewalls.forEach((firewall, index) => {
    if (!known.has(firewall)) errors.push({ path: `firewalls[${index}]`, message: `unknown firewall "${firewall}"` })
  })
  if (body.rateLimit !== undefined && body.rateLimit > runtime.settings.rate) {
    errors.push({ path: 'rateLimit', message: `at most ${runtime.settings.rate} deliveries per second (WEBHOOK_RATE)` })
  }
  const keepable = new Set(Object.keys(current?.headers ?? {}).map((name) => name.toLowerCase()))
  errors.push(...validateCustomHeaders(body.headers ?? {}, keepable, REDACTED))
  const moved = current ? placeholdersForNewOrigin(body.headers ?? {}, current.url, body.url, REDACTED) : []
  // A header refused twice (no stored value, and a new origin) is reported once.
  const reported = new Set(errors.map((error) => error.path))
  const movedOnly = moved.filter((error) => !reported.has(error.path))
  if (movedOnly.length && errors.length === 0) code = HEADERS_REQUIRED
  errors.push(...movedOnly)
  if (errors.length) throw invalid(code, errors.map((error) => `${error.path}: ${error.message}`).join('; '), errors)
}

/** The code of a change of origin that would carry stored header values along (CONTRACT section 8). */
const HEADERS_REQUIRED = 'headers_required_for_new_url'

/**
 * Judged again on the document the write replaces: an edit that moved the URL after the
 * validation read must not let the placeholder carry that URL's values to this body's origin.
 */
function refuseHeadersForNewUrl(body: WebhookInput, current: WebhookRecord): void {
  const moved = placeholdersForNewOrigin(body.headers ?? {}, current.url, body.url, REDACTED)
  if (moved.length)
    throw invalid(HEADERS_REQUIRED, moved.map((error) => `${error.path}: ${error.message}`).join('; '), moved)
}

/** The fields a create or update sets; `rateLimit` and `headers` omitted are removed (PUT replaces). */
function subscription(body: WebhookInput, current: WebhookRecord | null) {
  const headers = mergeCustomHeaders(body.headers ?? {}, current?.headers, REDACTED)
  return {
    name: body.name,
    url: body.url,
    enabled: body.enabled,
    eventTypes: [...new Set(body.eventTypes)],
    firewalls: [...new Set(body.firewalls)],
    ...(body.rateLimit === undefined ? {} : { rateLimit: body.rateLimit }),
    ...(Object.keys(headers).length ? { headers } : {}),
  }
}

/** Signals the delivery host; a lost signal is caught by its periodic reconcile. */
export async function signalChange(ctx: WebhookCall, kind: 'changed' | 'deleted', id: string): Promise<void> {
  await ctx.services.webhookSignals.publish({ kind, refs: [webhookRef(ctx.ns, id)] }).catch(() => undefined)
}

export async function listWebhooks(ctx: WebhookCall): Promise<WebhookView[]> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:read')
  return (await ctx.services.webhooks.list(ctx.ns)).map((record) => webhookView(record))
}

export async function getWebhook(ctx: WebhookCall, id: string): Promise<WebhookView> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:read')
  return webhookView(await loadWebhook(ctx, id))
}

/** Creates a webhook; the answer is the only read that carries the secret without a reveal. */
export async function createWebhook(ctx: WebhookCall, body: WebhookInput): Promise<WebhookView> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  await validateInput(ctx, body, null)
  const id = body.id ?? newId('wh', ctx.services.clock.now())
  const now = nowIso(ctx)
  const paused = pausedSpansAfter([], body.enabled, now)
  const record: WebhookRecord = {
    id,
    namespace: ctx.ns,
    ...subscription(body, null),
    ...(paused.length ? { pausedSpans: paused } : {}),
    secret: generateSecret(),
    createdAt: now,
    updatedAt: now,
  }
  await ctx.services.webhooks.mutate(ctx.ns, id, (current) => {
    if (current) throw conflict('webhook_exists', `webhook "${id}" already exists`)
    return {
      next: record,
      also: () => ({ events: [configEvent(ctx, 'config.webhook.created', record)] }),
      result: undefined,
    }
  })
  await signalChange(ctx, 'changed', id)
  return webhookView(record, true)
}

/** Replaces name, URL, enabled state, event types and firewall scope; the secret is untouched. */
export async function updateWebhook(ctx: WebhookCall, id: string, body: WebhookInput): Promise<WebhookView> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  if (body.id !== undefined && body.id !== id) {
    throw invalid('id_mismatch', `body id "${body.id}" differs from the path id "${id}"`, [
      { path: 'id', message: 'must equal the path id' },
    ])
  }
  await validateInput(ctx, body, await loadWebhook(ctx, id))
  const record = await ctx.services.webhooks.mutate(ctx.ns, id, (current) => {
    if (!current) throw notFound('webhook', id)
    refuseHeadersForNewUrl(body, current)
    const { rateLimit: _rate, headers: _headers, ...kept } = current
    const now = nowIso(ctx)
    const paused = pausedSpansAfter(current.pausedSpans, body.enabled, now)
    const next: WebhookRecord = {
      ...kept,
      ...subscription(body, current),
      ...(paused.length ? { pausedSpans: paused } : {}),
      updatedAt: now,
    }
    return { next, also: () => ({ events: [configEvent(ctx, 'config.webhook.updated', next)] }), result: next }
  })
  await signalChange(ctx, 'changed', id)
  return webhookView(record)
}

/** Deletes the webhook with its cursor, snapshot, delivery records and metric buckets (its events stay in the namespace log). */
export async function deleteWebhook(ctx: WebhookCall, id: string): Promise<void> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  const { webhooks, webhookRecords } = ctx.services
  await webhooks.mutate(ctx.ns, id, (current) => {
    if (!current) throw notFound('webhook', id)
    return {
      next: null,
      also: () => ({ events: [configEvent(ctx, 'config.webhook.deleted', current)] }),
      result: undefined,
    }
  })
  await signalChange(ctx, 'deleted', id)
  await Promise.all([webhookRecords.deleteDeliveries(ctx.ns, id), webhookRecords.deleteMetrics(ctx.ns, id)])
}
