import { hasNamespacePermission } from '../../auth/permissions'
import { notFound } from '../../common/errors'
import { getDelivery, listAttempts, resendDelivery } from '../../webhooks/configuration/delivery-control'
import { getWebhook } from '../../webhooks/configuration/crud'
import type { AttemptRecord } from '../../webhooks/delivery/attempt-record'
import { card, facts, heading, postButton, status, table } from '../components'
import { orInPlace } from '../forms'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { layout } from '../layout'
import { prettyBody } from './webhook-sections'

/**
 * `/namespaces/{ns}/webhooks/{id}/deliveries/{deliveryId}`: one delivery record with its payload
 * and every attempt (status, response, error, the retry scheduled after it); managers can resend it.
 */

const DELIVERY_ID = /^whdel-[A-Za-z0-9]{1,64}$/

function attemptsSection(attempts: AttemptRecord[]): Html {
  const rows = attempts.map((a) => [
    String(a.attempt),
    time(a.startedAt),
    `${a.durationMillis} ms`,
    a.responseStatus ? String(a.responseStatus) : html`<span class="muted">no response</span>`,
    a.responseBody
      ? html`<details>
          <summary>${Buffer.byteLength(a.responseBody)} bytes</summary>
          <pre class="code">${prettyBody(a.responseBody)}</pre>
        </details>`
      : html`<span class="muted">(empty)</span>`,
    a.error ?? '',
    a.nextAttemptAt ? time(a.nextAttemptAt) : html`<span class="muted">—</span>`,
  ])
  return card(
    'Attempts',
    table(
      'Attempts',
      ['#', 'Started', 'Duration', 'Response', 'Body', 'Error', 'Retry scheduled'],
      rows,
      'No attempt recorded.',
    ),
    'attempts',
  )
}

const deliveryPath = (ns: string, id: string, deliveryId: string) =>
  href('namespaces', ns, 'webhooks', id, 'deliveries', deliveryId)

/** The route's delivery id, held to the API's id rule (operations/webhooks.ts): nothing else can name a stored record. */
function deliveryIdOf(req: DashboardRequest): string {
  const { deliveryId } = req.params
  if (!DELIVERY_ID.test(deliveryId)) throw notFound('delivery', deliveryId)
  return deliveryId
}

/** The page; `refused` is why a resend just failed (shown above the record). */
export async function deliveryPage(req: DashboardRequest, refused?: string): Promise<Html> {
  const { ns, principal } = req.viewer
  const id = req.params.id
  const deliveryId = deliveryIdOf(req)
  const [webhook, record, attempts] = await Promise.all([
    getWebhook(req.ctx, id),
    getDelivery(req.ctx, id, deliveryId),
    listAttempts(req.ctx, id, deliveryId),
  ])
  const resend = hasNamespacePermission(principal, 'ns:webhooks:manage')
    ? postButton(req.viewer, `${deliveryPath(ns, id, record.id)}/resend`, 'Resend')
    : undefined
  const refusal = refused
    ? html`<div class="form-errors" role="alert" data-testid="resend-refused">
        <p><strong>Not resent.</strong> ${refused}</p>
      </div>`
    : ''
  const body = html`${heading(html`Delivery <code>${record.id}</code>`, resend, html`${status(record.status)}${record.test ? html` <span class="pill info">test</span>` : ''} · ${record.eventCount} events (${record.eventTypes.join(', ')})`)}
  ${refusal}
  ${card(
    'Record',
    facts([
      ['Attempts', String(record.attempts)],
      ['First attempt', time(record.createdAt)],
      ['Completed', record.completedAt ? time(record.completedAt) : '—'],
      ['Last response', record.responseStatus ? String(record.responseStatus) : 'none'],
      ['Last error', record.error ?? '—'],
    ]),
  )}
  ${attemptsSection(attempts)}
  ${card(`Payload${record.payloadTruncated ? ' (truncated)' : ''}`, html`<pre class="code" tabindex="0">${prettyBody(record.payload)}</pre>`, 'payload')}`
  return layout({
    title: `Delivery ${record.id}`,
    section: 'webhooks',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [
      ['Webhooks', href('namespaces', ns, 'webhooks')],
      [webhook.name, href('namespaces', ns, 'webhooks', id)],
    ],
    body,
  })
}

/**
 * Resend (the API's `POST .../resend`): the same events under a new delivery id and `webhook-id`,
 * at the back of the queue. Shows the new delivery, or this one with the reason it was refused
 * (409: the log no longer holds the events, or the record predates event ids).
 */
export async function resendAction(req: DashboardRequest): Promise<ActionResult> {
  const { ns } = req.viewer
  const { id } = req.params
  const deliveryId = deliveryIdOf(req)
  return orInPlace(
    async () => {
      const record = await resendDelivery(req.ctx, id, deliveryId)
      return {
        redirect: deliveryPath(ns, id, record.id),
        flash: `Resent ${deliveryId} as ${record.id}: the same ${record.eventCount} events under a new webhook-id, queued behind what was waiting.`,
      }
    },
    () => undefined,
    async (errors) => deliveryPage(req, errors.general.join(' ')),
  )
}
