import { eventLinkOrigin } from '../../app/config'
import { buildWebhookEventsSchema, WEBHOOK_EVENTS_SCHEMA_PATH } from '../../events/json-schema'
import { card, heading, table } from '../components'
import type { DashboardRequest } from '../handler'
import { href, html, type Html } from '../html'
import { layout } from '../layout'

/**
 * `/namespaces/{ns}/event-types`: every event type a webhook can receive, with its description
 * and the JSON Schema of its `data`, read from the published `/schemas/webhook-events-v1.json`
 * (the same document receivers validate against), so the catalog cannot disagree with it.
 */

type Json = Record<string, unknown>

interface CatalogEntry {
  type: string
  description: string
  family: string
  /** `$defs` entry of the event's data. */
  dataSchema: string
  system: boolean
}

/** The catalog entries of the schema document: one per `if type = ... then data: $ref` rule. */
function catalogOf(document: Json): CatalogEntry[] {
  const defs = document.$defs as Record<string, Json>
  const rules = (defs.Event.allOf ?? []) as Json[]
  return rules.map((rule) => {
    const typeSchema = ((rule.if as Json).properties as Record<string, Json>).type
    const type = typeof typeSchema.const === 'string' ? typeSchema.const : 'audit.*'
    const ref = String((((rule.then as Json).properties as Record<string, Json>).data as Json).$ref)
    return {
      type,
      description: String(rule.description ?? ''),
      family: type.split('.')[0],
      dataSchema: ref.replace('#/$defs/', ''),
      system: type.startsWith('webhook.'),
    }
  })
}

const anchor = (type: string) => `type-${type.replace(/[^a-z0-9]+/gi, '-')}`

export async function eventCatalogPage(req: DashboardRequest): Promise<Html> {
  const document = buildWebhookEventsSchema(eventLinkOrigin(req.services.config)) as Json
  const defs = document.$defs as Record<string, Json>
  const entries = catalogOf(document)
  const index = table(
    'Event types',
    ['Type', 'Subscribe with', 'What it reports'],
    entries.map((entry) => [
      html`<a href="#${anchor(entry.type)}"><code>${entry.type}</code></a>`,
      entry.system
        ? html`<span class="pill info">always delivered</span>`
        : html`<code>${entry.type}</code> or <code>${entry.family}.*</code>`,
      entry.description,
    ]),
  )
  const sections = entries.map(
    (entry) =>
      html`<section
        class="card"
        id="${anchor(entry.type)}"
        aria-labelledby="${anchor(entry.type)}-h"
        data-event-type="${entry.type}"
      >
        <h2 id="${anchor(entry.type)}-h"><code>${entry.type}</code></h2>
        <p>${entry.description}</p>
        <details>
          <summary><code>data</code> schema: ${entry.dataSchema}</summary>
          <pre class="code" tabindex="0" aria-label="Schema of ${entry.type} data">
${JSON.stringify(defs[entry.dataSchema], null, 2)}</pre>
        </details>
      </section>`,
  )
  const body = html`${heading(
    'Event types',
    html`<a class="button" href="${WEBHOOK_EVENTS_SCHEMA_PATH}">JSON Schema document</a
      ><a class="button" href="${href('namespaces', req.viewer.ns, 'webhooks')}">Webhooks</a>`,
    html`Every event a webhook can receive. Each delivery is <code>{"version": 1, "events": [...]}</code>; every event
      has <code>id</code>, <code>type</code>, <code>time</code>, <code>namespace</code> and the
      <code>data</code> below.`,
  )}
  ${card(
    'Catalog',
    html`${index}
      <p class="small muted">
        Subscriptions take exact types or prefixes ending in <code>.*</code>; a bare <code>*</code> and
        <code>webhook.*</code> are refused. <code>firewall.*</code>, <code>package.*</code> and
        <code>exception-request.*</code> follow the webhook’s firewall scope.
      </p>`,
    'catalog',
  )}
  ${sections}`
  return layout({
    title: 'Event types',
    section: 'webhooks',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [['Webhooks', href('namespaces', req.viewer.ns, 'webhooks')]],
    body,
  })
}
