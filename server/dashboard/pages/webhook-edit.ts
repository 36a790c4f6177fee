import { EVENT_DATA_SCHEMAS } from '../../events/schemas'
import { listFirewalls } from '../../firewall/queries'
import { namespace as namespaceAccess } from '../../http/access'
import { REDACTED, WebhookInput, type WebhookView } from '../../webhooks/configuration/model'
import { deleteWebhook, getWebhook, updateWebhook } from '../../webhooks/configuration/crud'
import { card, heading, postButton } from '../components'
import {
  checkField,
  errorSummary,
  fieldId,
  inputField,
  NO_ERRORS,
  orInPlace,
  textareaField,
  type FormErrors,
} from '../forms'
import { headerLines, parseHeaderLines } from '../header-lines'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'
import { listField } from './webhooks'

/**
 * `/namespaces/{ns}/webhooks/{id}/edit`: name, URL, event types, firewall scope, rate limit,
 * enabled; and the enable/disable and delete actions. All go through `updateWebhook` /
 * `deleteWebhook`, the API's `PUT` and `DELETE`. The signing secret is never part of the form;
 * custom headers are lines whose stored values show as the API's placeholder, which keeps them.
 */

const whPath = (ns: string, id: string, ...rest: string[]) => href('namespaces', ns, 'webhooks', id, ...rest)

/** Subscription choices offered as checkboxes: each family's prefix, then its exact types. */
const PREFIXES = ['firewall.*', 'config.*', 'package.*', 'exception-request.*', 'audit.*']
const EXACT = Object.keys(EVENT_DATA_SCHEMAS).filter((type) => !type.startsWith('webhook.'))
const OFFERED = new Set([...PREFIXES, ...EXACT])

interface WebhookValues {
  name: string
  url: string
  enabled: boolean
  eventTypes: string[]
  /** Entries not offered as a checkbox (`audit.team.*`, `audit.firewall.put`, ...). */
  otherTypes: string
  firewalls: string[]
  rateLimit: string
  /** Custom headers, one `Name: value` per line. */
  headers: string
}

const valuesOf = (wh: WebhookView): WebhookValues => ({
  name: wh.name,
  url: wh.url,
  enabled: wh.enabled,
  eventTypes: wh.eventTypes.filter((type) => OFFERED.has(type)),
  otherTypes: wh.eventTypes.filter((type) => !OFFERED.has(type)).join(', '),
  firewalls: wh.firewalls,
  rateLimit: wh.rateLimit === undefined ? '' : String(wh.rateLimit),
  headers: headerLines(wh.headers),
})

const valuesFrom = (form: Form): WebhookValues => ({
  name: form.get('name') ?? '',
  url: form.text('url') ?? '',
  enabled: form.get('enabled') === 'true',
  eventTypes: form.all('eventTypes'),
  otherTypes: form.get('otherTypes') ?? '',
  firewalls: form.all('firewalls'),
  rateLimit: form.text('rateLimit') ?? '',
  headers: form.get('headers') ?? '',
})

/** The API body of the form: a header line still holding the placeholder keeps its stored value. */
function inputOf(values: WebhookValues) {
  const headers = parseHeaderLines(values.headers)
  return WebhookInput.parse({
    name: values.name,
    url: values.url,
    enabled: values.enabled,
    eventTypes: [...values.eventTypes, ...listField(values.otherTypes)],
    firewalls: values.firewalls,
    ...(values.rateLimit ? { rateLimit: Number(values.rateLimit) } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
  })
}

/** `eventTypes[3]` names an entry of the combined list: the checkboxes or the other-types field. */
const fieldOf = (path: string) => {
  if (path.startsWith('eventTypes')) return 'eventTypes'
  if (path.startsWith('firewalls')) return 'firewalls'
  const field = /^(name|url|rateLimit|enabled|headers)\b/.exec(path)?.[1]
  return field
}

function group(errors: FormErrors, name: string, legend: string, boxes: Html[], hint?: Html): Html {
  const messages = errors.of(name)
  return html`<fieldset class="form-section${messages.length ? ' has-error' : ''}" id="${fieldId(name)}">
    <legend>${legend}</legend>
    ${hint ? html`<p class="small muted">${hint}</p>` : ''}
    <div class="chips">${boxes}</div>
    ${messages.length ? html`<p class="field-error" id="${fieldId(name)}-err">${messages.join('; ')}</p>` : ''}
  </fieldset>`
}

async function renderForm(
  req: DashboardRequest,
  webhook: WebhookView,
  values: WebhookValues,
  errors: FormErrors,
): Promise<Html> {
  const { ns } = req.viewer
  const firewalls = (await listFirewalls(req.ctx)).map((fw) => fw.id)
  const known = [...new Set([...firewalls, ...values.firewalls])]
  const box = (name: string, value: string, checked: boolean, label: Html) =>
    html`<label class="check"
      ><input type="checkbox" name="${name}" value="${value}" ${checked ? ' checked' : ''} /> ${label}</label
    >`
  const catalog = href('namespaces', ns, 'event-types')
  const form = html`<form method="post" action="${whPath(ns, webhook.id)}" class="stack" novalidate>
    ${csrfField(req.viewer)}${errorSummary(errors)}
    <div class="grid form-grid">
      ${inputField(errors, { label: 'Name', name: 'name', value: values.name, required: true })}
      ${inputField(errors, { label: 'Receiver URL', name: 'url', type: 'url', value: values.url, required: true })}
      ${inputField(errors, { label: 'Rate limit (deliveries per second)', name: 'rateLimit', type: 'number', value: values.rateLimit, attrs: html` min="0.01" step="0.01"`, hint: 'Empty: the operator’s WEBHOOK_RATE.' })}
      ${checkField(errors, { label: 'Enabled', name: 'enabled', checked: values.enabled })}
    </div>
    ${group(
      errors,
      'eventTypes',
      'Event types',
      [
        ...PREFIXES.map((p) => box('eventTypes', p, values.eventTypes.includes(p), html`<code>${p}</code>`)),
        ...EXACT.map((t) => box('eventTypes', t, values.eventTypes.includes(t), html`<code>${t}</code>`)),
      ],
      html`A prefix covers every type under it. What each type carries: <a href="${catalog}">event catalog</a>. System
        events (<code>webhook.*</code>) are always delivered.`,
    )}
    ${inputField(errors, { label: 'Other event types', name: 'otherTypes', value: values.otherTypes, placeholder: 'audit.team.*, audit.firewall.put', hint: 'Comma-separated exact types or prefixes not listed above.' })}
    ${group(
      errors,
      'firewalls',
      'Firewalls',
      known.map((id) => box('firewalls', id, values.firewalls.includes(id), html`<code>${id}</code>`)),
      html`Limits <code>firewall.*</code>, <code>package.*</code> and <code>exception-request.*</code> events to these
        firewalls; none ticked means every firewall.`,
    )}
    ${textareaField(errors, { label: 'Custom headers', name: 'headers', value: values.headers, rows: 3, placeholder: 'X-Team: payments', hint: html`Sent with every delivery, one <code>Name: value</code> per line. Stored values show as <code>${REDACTED}</code>, which keeps them; remove a line to remove its header.` })}
    <div class="actions">
      <button class="button primary" type="submit">Save webhook</button>
      <a class="button" href="${whPath(ns, webhook.id)}">Cancel</a>
    </div>
  </form>`
  const danger = html`<section class="card danger-zone" id="delete" aria-labelledby="delete-h">
    <h2 id="delete-h">Delete</h2>
    <p class="small muted">
      Deleting drops its buffered events and delivery records. Receivers stop getting events at once.
    </p>
    ${postButton(req.viewer, whPath(ns, webhook.id, 'delete'), 'Delete webhook', { kind: 'danger', confirm: `Delete webhook ${webhook.name}?` })}
  </section>`
  const body = html`${heading(html`Edit ${webhook.name}`, '', html`<code>${webhook.id}</code>`)}${card('Webhook', form, 'webhook')}${danger}`
  return layout({
    title: `Edit ${webhook.name}`,
    section: 'webhooks',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [
      ['Webhooks', href('namespaces', ns, 'webhooks')],
      [webhook.name, whPath(ns, webhook.id)],
    ],
    body,
  })
}

export async function editWebhookPage(req: DashboardRequest): Promise<Html> {
  const webhook = await getWebhook(req.ctx, req.params.id)
  return renderForm(req, webhook, valuesOf(webhook), NO_ERRORS)
}

export async function saveWebhookAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const webhook = await getWebhook(req.ctx, req.params.id)
  const values = valuesFrom(form)
  return orInPlace(
    async () => {
      // The API's access check before the body is judged.
      await namespaceAccess('ns:webhooks:manage')(req.ctx, req.params)
      const saved = await updateWebhook(req.ctx, webhook.id, inputOf(values))
      return { redirect: whPath(req.viewer.ns, saved.id), flash: `Webhook ${saved.name} saved.` }
    },
    fieldOf,
    async (errors) => renderForm(req, webhook, values, errors),
  )
}

/** POST `.../enabled` with `enabled=true|false`: the same update with only the state changed. */
export async function setEnabledAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const webhook = await getWebhook(req.ctx, req.params.id)
  const enabled = form.get('enabled') === 'true'
  await updateWebhook(
    req.ctx,
    webhook.id,
    inputOf({ ...valuesOf(webhook), eventTypes: webhook.eventTypes, otherTypes: '', enabled }),
  )
  return {
    redirect: whPath(req.viewer.ns, webhook.id),
    flash: enabled
      ? 'Webhook enabled: deliveries resume.'
      : 'Webhook disabled: no deliveries until it is enabled again.',
  }
}

export async function deleteWebhookAction(req: DashboardRequest): Promise<ActionResult> {
  await deleteWebhook(req.ctx, req.params.id)
  return { redirect: href('namespaces', req.viewer.ns, 'webhooks'), flash: `Webhook ${req.params.id} deleted.` }
}
