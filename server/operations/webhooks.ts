import { z } from 'zod'
import { ClientId } from '../common/ids'
import { defineOperation } from '../http/operation'
import { namespace } from '../http/access'
import { WebhookInput, WebhookView } from '../webhooks/configuration/model'
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, updateWebhook } from '../webhooks/configuration/crud'
import {
  getDelivery,
  listAttempts,
  listDeliveries,
  RecoverWindow,
  recoverDeliveries,
  releaseQuarantine,
  resendDelivery,
  sendTest,
  webhookMetrics,
  webhookState,
} from '../webhooks/configuration/delivery-control'
import { revealSecret, rotateSecret } from '../webhooks/configuration/secret'
import { EventId, getEvent } from '../webhooks/configuration/event-lookup'
import { NsParams, PageQuery, nextLink } from './common'

const tag = 'Webhooks'
const WhParams = NsParams.extend({ id: ClientId })
const audit = (action: string, reads = false) => ({
  action,
  resourceType: 'webhook',
  resourceId: (p: { id?: string }) => p.id,
  reads,
})
const Timestamp = z.iso.datetime({ offset: true })

const DeliveryRecordSchema = z.object({
  id: z.string(),
  webhook: z.string(),
  test: z.boolean(),
  status: z.enum(['retrying', 'success', 'failed']),
  attempts: z.number().int(),
  eventCount: z.number().int(),
  eventTypes: z.array(z.string()),
  payload: z.string(),
  payloadTruncated: z.boolean(),
  responseStatus: z.number().int(),
  responseBody: z.string(),
  error: z.string().optional(),
  durationMillis: z.number(),
  createdAt: z.string(),
  completedAt: z.string().optional(),
})

const AttemptSchema = z.object({
  attempt: z.number().int().min(1),
  startedAt: z.string(),
  durationMillis: z.number(),
  responseStatus: z.number().int(),
  responseBody: z.string(),
  error: z.string().optional(),
  nextAttemptAt: z.string().optional(),
})

const DeliveryParams = WhParams.extend({ deliveryId: z.string().regex(/^whdel-[A-Za-z0-9]{1,64}$/) })

const EventSchema = z.object({
  id: z.string(),
  type: z.string(),
  time: z.string(),
  namespace: z.string(),
  data: z.record(z.string(), z.unknown()),
})

/** The webhook operations (see the OpenAPI document); handlers only translate HTTP to the domain. */
export const webhookOperations = [
  defineOperation({
    id: 'listWebhooks',
    method: 'GET',
    path: '/v1/{ns}/webhooks',
    summary: 'List webhooks (secrets redacted)',
    tag,
    params: NsParams,
    access: namespace('ns:webhooks:read'),
    response: z.array(WebhookView),
    audit: audit('webhook.list'),
    handler: async ({ ctx }) => ({ body: await listWebhooks(ctx) }),
  }),
  defineOperation({
    id: 'createWebhook',
    method: 'POST',
    path: '/v1/{ns}/webhooks',
    summary: 'Create a webhook (the answer carries the secret in full)',
    tag,
    params: NsParams,
    access: namespace('ns:webhooks:manage'),
    body: WebhookInput,
    response: WebhookView,
    successStatus: 201,
    audit: audit('webhook.create'),
    handler: async ({ ctx, body, url }) => {
      const webhook = await createWebhook(ctx, body)
      return { status: 201, body: webhook, headers: { location: `${url.pathname}/${webhook.id}` } }
    },
  }),
  defineOperation({
    id: 'getWebhook',
    method: 'GET',
    path: '/v1/{ns}/webhooks/{id}',
    summary: 'Get a webhook (secret redacted)',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:read'),
    response: WebhookView,
    audit: audit('webhook.read'),
    handler: async ({ ctx, params }) => ({ body: await getWebhook(ctx, params.id) }),
  }),
  defineOperation({
    id: 'updateWebhook',
    method: 'PUT',
    path: '/v1/{ns}/webhooks/{id}',
    summary: 'Update a webhook',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:manage'),
    body: WebhookInput,
    response: WebhookView,
    audit: audit('webhook.update'),
    handler: async ({ ctx, params, body }) => ({ body: await updateWebhook(ctx, params.id, body) }),
  }),
  defineOperation({
    id: 'deleteWebhook',
    method: 'DELETE',
    path: '/v1/{ns}/webhooks/{id}',
    summary: 'Delete a webhook',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:manage'),
    successStatus: 204,
    audit: audit('webhook.delete'),
    handler: async ({ ctx, params }) => {
      await deleteWebhook(ctx, params.id)
      return { status: 204 }
    },
  }),
  defineOperation({
    id: 'revealWebhookSecret',
    method: 'GET',
    path: '/v1/{ns}/webhooks/{id}/secret',
    summary: 'Reveal the signing secret',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:manage'),
    response: z.object({ secret: z.string() }),
    audit: audit('webhook.secret.reveal', true),
    handler: async ({ ctx, params }) => ({ body: await revealSecret(ctx, params.id) }),
  }),
  defineOperation({
    id: 'rotateWebhookSecret',
    method: 'POST',
    path: '/v1/{ns}/webhooks/{id}/secret/rotate',
    summary: 'Rotate the signing secret (the previous one keeps signing during the overlap)',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:manage'),
    response: z.object({ secret: z.string(), previousSecretValidUntil: z.string() }),
    audit: audit('webhook.secret.rotate'),
    handler: async ({ ctx, params }) => ({ body: await rotateSecret(ctx, params.id) }),
  }),
  defineOperation({
    id: 'releaseWebhook',
    method: 'POST',
    path: '/v1/{ns}/webhooks/{id}/release',
    summary: 'Release a quarantined webhook now',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:manage'),
    response: WebhookView,
    audit: audit('webhook.release'),
    handler: async ({ ctx, params }) => ({ body: await releaseQuarantine(ctx, params.id) }),
  }),
  defineOperation({
    id: 'testWebhook',
    method: 'POST',
    path: '/v1/{ns}/webhooks/{id}/test',
    summary: 'Send a webhook.test event through the normal delivery path',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:manage'),
    response: z.object({ event: z.string() }),
    successStatus: 202,
    audit: audit('webhook.test'),
    handler: async ({ ctx, params }) => ({ status: 202, body: await sendTest(ctx, params.id) }),
  }),
  defineOperation({
    id: 'listWebhookDeliveries',
    method: 'GET',
    path: '/v1/{ns}/webhooks/{id}/deliveries',
    summary: 'Delivery records, newest first',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:read'),
    query: PageQuery.extend({ limit: z.coerce.number().int().min(1).max(128).default(50) }),
    response: z.array(DeliveryRecordSchema),
    audit: audit('webhook.deliveries.read'),
    handler: async ({ ctx, params, query, url }) => {
      const page = await listDeliveries(ctx, params.id, query.limit, query.cursor)
      return { body: page.items, headers: nextLink(url, page.next) }
    },
  }),
  defineOperation({
    id: 'getWebhookDelivery',
    method: 'GET',
    path: '/v1/{ns}/webhooks/{id}/deliveries/{deliveryId}',
    summary: 'One delivery record',
    tag,
    params: DeliveryParams,
    access: namespace('ns:webhooks:read'),
    response: DeliveryRecordSchema,
    audit: audit('webhook.delivery.read'),
    handler: async ({ ctx, params }) => ({ body: await getDelivery(ctx, params.id, params.deliveryId) }),
  }),
  defineOperation({
    id: 'getEvent',
    method: 'GET',
    path: '/v1/{ns}/events/{eventId}',
    summary: 'One event of the namespace log by id, whole (a delivery may carry it cut: payloadTruncated)',
    tag,
    params: NsParams.extend({ eventId: EventId }),
    access: namespace('ns:webhooks:manage'),
    response: EventSchema,
    audit: { action: 'event.read', resourceType: 'event', resourceId: (p) => p.eventId },
    handler: async ({ ctx, params }) => ({ body: await getEvent(ctx, params.eventId) }),
  }),
  defineOperation({
    id: 'listWebhookDeliveryAttempts',
    method: 'GET',
    path: '/v1/{ns}/webhooks/{id}/deliveries/{deliveryId}/attempts',
    summary: 'Every attempt of one delivery, oldest first',
    tag,
    params: DeliveryParams,
    access: namespace('ns:webhooks:read'),
    response: z.array(AttemptSchema),
    audit: audit('webhook.delivery.attempts.read'),
    handler: async ({ ctx, params }) => ({ body: await listAttempts(ctx, params.id, params.deliveryId) }),
  }),
  defineOperation({
    id: 'resendWebhookDelivery',
    method: 'POST',
    path: '/v1/{ns}/webhooks/{id}/deliveries/{deliveryId}/resend',
    summary: 'Resend a delivery: the same events under a new delivery id, at the back of the queue',
    tag,
    params: DeliveryParams,
    access: namespace('ns:webhooks:manage'),
    response: DeliveryRecordSchema,
    successStatus: 202,
    audit: { action: 'webhook.delivery.resend', resourceType: 'webhook', resourceId: (p: { id?: string }) => p.id },
    handler: async ({ ctx, params }) => ({
      status: 202,
      body: await resendDelivery(ctx, params.id, params.deliveryId),
    }),
  }),
  defineOperation({
    id: 'recoverWebhookDeliveries',
    method: 'POST',
    path: '/v1/{ns}/webhooks/{id}/recover',
    summary: 'Re-queue the events of the failed deliveries of a time window, oldest first',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:manage'),
    body: RecoverWindow,
    response: z.object({ count: z.number().int(), unavailable: z.array(z.string()).optional() }),
    successStatus: 202,
    audit: audit('webhook.recover'),
    handler: async ({ ctx, params, body }) => ({ status: 202, body: await recoverDeliveries(ctx, params.id, body) }),
  }),
  defineOperation({
    id: 'getWebhookMetrics',
    method: 'GET',
    path: '/v1/{ns}/webhooks/{id}/metrics',
    summary: 'Delivery metrics per time bucket',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:read'),
    query: z.object({
      bucket: z.enum(['1m', '1h', '1d']).default('1h'),
      since: Timestamp.optional(),
      until: Timestamp.optional(),
    }),
    response: z.object({ bucket: z.string(), buckets: z.array(z.record(z.string(), z.unknown())) }),
    audit: audit('webhook.metrics.read'),
    handler: async ({ ctx, params, query }) => ({ body: await webhookMetrics(ctx, params.id, query) }),
  }),
  defineOperation({
    id: 'getWebhookState',
    method: 'GET',
    path: '/v1/{ns}/webhooks/{id}/state',
    summary: 'Delivery lifecycle state of a webhook',
    tag,
    params: WhParams,
    access: namespace('ns:webhooks:read'),
    response: z.object({
      state: z.string(),
      bufferedEvents: z.number().int(),
      quarantinedUntil: z.string().optional(),
      nextAttemptAt: z.string().optional(),
    }),
    audit: audit('webhook.state.read'),
    handler: async ({ ctx, params }) => ({ body: await webhookState(ctx, params.id) }),
  }),
]
