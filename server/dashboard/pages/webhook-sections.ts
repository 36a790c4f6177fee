import type { DeliveryRecord, MetricBucket } from '../../webhooks/delivery/record'
import { card, status, table } from '../components'
import { html, raw, time } from '../html'
import { stackedBars } from '../metrics-chart'

/** The delivery records and metrics sections of the webhook page. */

/** A stored body, pretty-printed when it is JSON. */
export function prettyBody(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

/** `base` is the webhook page's path; each delivery links to its own page (attempts). */
export function deliveriesSection(records: DeliveryRecord[], base: string) {
  const rows = records.map((r) => [
    html`<details>
      <summary><code>${r.id}</code>${r.test ? html` <span class="pill info">test</span>` : ''}</summary>
      <h4>Payload${r.payloadTruncated ? ' (truncated)' : ''}</h4>
      <pre class="code">${prettyBody(r.payload)}</pre>
      <h4>Response ${r.responseStatus || 'none'}</h4>
      <pre class="code">${r.responseBody ? prettyBody(r.responseBody) : '(empty)'}</pre>
      ${r.error ? html`<p class="small">Error: ${r.error}</p>` : ''}
      <p><a href="${base}/deliveries/${encodeURIComponent(r.id)}">All attempts</a></p>
    </details>`,
    status(r.status),
    String(r.attempts),
    html`${r.eventCount} <span class="small muted">${r.eventTypes.join(', ')}</span>`,
    r.responseStatus ? String(r.responseStatus) : html`<span class="muted">no response</span>`,
    `${r.durationMillis} ms`,
    time(r.createdAt),
  ])
  return card(
    'Deliveries',
    table(
      'Deliveries',
      [
        'Delivery (open for payload and response)',
        'Status',
        'Attempts',
        'Events',
        'Response',
        'Duration',
        'First attempt',
      ],
      rows,
      'No deliveries yet.',
    ),
    'deliveries',
  )
}

export function metricsSection(base: string, bucket: '1m' | '1h' | '1d', metrics: { buckets: MetricBucket[] }) {
  const daily = bucket === '1d'
  const deliveries = stackedBars(
    'Delivery attempts',
    [
      { name: 'succeeded', colour: '#16a34a' },
      { name: 'failed', colour: '#dc2626' },
    ],
    metrics.buckets.map((b) => ({ start: b.start, values: [b.deliveriesSuccess, b.deliveriesFailed] })),
    daily,
  )
  const events = stackedBars(
    'Events',
    [
      { name: 'sent', colour: '#2563eb' },
      { name: 'dropped', colour: '#f59e0b' },
    ],
    metrics.buckets.map((b) => ({ start: b.start, values: [b.eventsSent, b.eventsDropped] })),
    daily,
  )
  const picker = html`<nav class="tabs" aria-label="Bucket size">
    ${(['1m', '1h', '1d'] as const).map((b) => html`<a href="${base}?bucket=${b}#metrics" ${b === bucket ? html` aria-current="page"` : ''}>${b === '1m' ? 'last hour' : b === '1h' ? 'last day' : 'last month'}</a>`)}
  </nav>`
  const nonEmpty = metrics.buckets.filter(
    (b) => b.deliveriesSuccess + b.deliveriesFailed + b.eventsSent + b.eventsDropped > 0,
  )
  const numbers = table(
    'Metric buckets',
    ['Bucket start', 'Succeeded', 'Failed', 'Events sent', 'Dropped', 'Avg ms'],
    nonEmpty.map((b) => [
      time(b.start),
      String(b.deliveriesSuccess),
      String(b.deliveriesFailed),
      String(b.eventsSent),
      String(b.eventsDropped),
      String(b.avgDeliveryMillis),
    ]),
    'No activity in this period.',
  )
  return card(
    'Metrics',
    html`${picker}
      <div class="charts">${raw(deliveries)}${raw(events)}</div>
      <details>
        <summary>Numbers</summary>
        ${numbers}
      </details>`,
    'metrics',
  )
}
