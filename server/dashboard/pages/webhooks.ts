import { hasNamespacePermission } from '../../auth/permissions'
import { WebhookInput } from '../../webhooks/configuration/model'
import { createWebhook, listWebhooks } from '../../webhooks/configuration/crud'
import { webhookState } from '../../webhooks/configuration/delivery-control'
import { card, heading, status, table } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/** `/namespaces/{ns}/webhooks`: every webhook with its delivery state, and the create form. */

/** Comma- or newline-separated values of a text field. */
export const listField = (value: string | undefined) =>
  (value ?? '')
    .split(/[\s,]+/)
    .map((part) => part.trim())
    .filter(Boolean)

export async function webhooksPage(req: DashboardRequest) {
  const { ns, principal } = req.viewer
  const webhooks = await listWebhooks(req.ctx)
  const states = await Promise.all(webhooks.map((wh) => webhookState(req.ctx, wh.id)))
  const rows = webhooks.map((wh, i) => [
    html`<a href="${href('namespaces', ns, 'webhooks', wh.id)}"><strong>${wh.name}</strong></a>
      <div class="muted small">${wh.id}</div>`,
    html`<span class="break small">${wh.url}</span>`,
    wh.enabled ? status('active') : html`<span class="pill muted">disabled</span>`,
    status(states[i].state),
    String(states[i].bufferedEvents),
    states[i].quarantinedUntil ? time(states[i].quarantinedUntil) : html`<span class="muted">—</span>`,
    html`<span class="small">${wh.eventTypes.join(', ')}</span>`,
  ])
  const canManage = hasNamespacePermission(principal, 'ns:webhooks:manage')
  const firewalls = await req.services.firewalls.list(ns)
  const create = canManage
    ? card(
        'New webhook',
        html`<form method="post" action="${href('namespaces', ns, 'webhooks')}" class="grid form-grid">
          ${csrfField(req.viewer)}
          <label>Name <input name="name" required maxlength="200" /></label>
          <label
            >Receiver URL <input name="url" type="url" required placeholder="https://hooks.example.com/firewall"
          /></label>
          <label
            >Event types
            <input name="eventTypes" required placeholder="firewall.*, exception-request.*" aria-describedby="evt-help"
          /></label>
          <label
            >Firewalls
            <input
              name="firewalls"
              placeholder="${
                firewalls
                  .map((fw) => fw.id)
                  .slice(0, 3)
                  .join(', ') || 'all'
              }"
              aria-describedby="fw-help"
          /></label>
          <p id="evt-help" class="small muted">
            Comma-separated exact types or prefix patterns such as <code>config.*</code>.
          </p>
          <p id="fw-help" class="small muted">Comma-separated firewall ids; empty means every firewall.</p>
          <label class="check"><input type="checkbox" name="enabled" value="true" checked /> Enabled</label>
          <div class="actions"><button class="button primary" type="submit">Create webhook</button></div>
        </form>`,
        'create',
      )
    : ''
  const body = html`${heading('Webhooks', html`<a class="button" href="${href('namespaces', ns, 'event-types')}">Event types</a>`, 'Signed event delivery to your receivers.')}
  ${card('Webhooks', table('Webhooks', ['Webhook', 'URL', 'Enabled', 'State', 'Buffered', 'Quarantined until', 'Events'], rows, 'No webhooks yet.'))}
  ${create}`
  return layout({ title: 'Webhooks', section: 'webhooks', viewer: req.viewer, flash: req.flash, body })
}

/** POST `/namespaces/{ns}/webhooks`: the new webhook's page shows its secret once. */
export async function createWebhookAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const input = WebhookInput.parse({
    name: form.text('name') ?? '',
    url: form.text('url') ?? '',
    enabled: form.get('enabled') === 'true',
    eventTypes: listField(form.get('eventTypes')),
    firewalls: listField(form.get('firewalls')),
  })
  const webhook = await createWebhook(req.ctx, input)
  return {
    redirect: href('namespaces', req.viewer.ns, 'webhooks', webhook.id),
    flash: `Webhook ${webhook.name} created. Use “Reveal secret” to see its signing secret.`,
  }
}
