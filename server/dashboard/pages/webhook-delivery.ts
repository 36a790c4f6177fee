import { notFound } from '../../common/errors'
import { getDelivery, listAttempts } from '../../webhooks/configuration/service-actions'
import { getWebhook } from '../../webhooks/configuration/service'
import type { AttemptRecord } from '../../webhooks/delivery/attempt-record'
import { card, facts, heading, status, table } from '../components'
import type { DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { layout } from '../layout'
import { prettyBody } from './webhook-sections'

/**
 * `/namespaces/{ns}/webhooks/{id}/deliveries/{deliveryId}`: one delivery record with its payload
 * and every attempt (status, response, error, the retry scheduled after it).
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

export async function deliveryPage(req: DashboardRequest): Promise<Html> {
  const { ns } = req.viewer
  const { id, deliveryId } = req.params
  // The API's id rule (operations/webhooks.ts): nothing else can name a stored record.
  if (!DELIVERY_ID.test(deliveryId)) throw notFound('delivery', deliveryId)
  const [webhook, record, attempts] = await Promise.all([
    getWebhook(req.ctx, id),
    getDelivery(req.ctx, id, deliveryId),
    listAttempts(req.ctx, id, deliveryId),
  ])
  const body = html`${heading(html`Delivery <code>${record.id}</code>`, undefined, html`${status(record.status)}${record.test ? html` <span class="pill info">test</span>` : ''} · ${record.eventCount} events (${record.eventTypes.join(', ')})`)}
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
