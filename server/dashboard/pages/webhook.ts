import { webhookDeliveryMachine } from '../../../machines/webhook-delivery.machine'
import { hasNamespacePermission, requireNamespacePermission } from '../../auth/permissions'
import { invalid } from '../../common/errors'
import { getWebhook } from '../../webhooks/configuration/crud'
import {
  listDeliveries,
  RecoverWindow,
  recoverDeliveries,
  releaseQuarantine,
  sendTest,
  webhookMetrics,
  webhookState,
} from '../../webhooks/configuration/delivery-control'
import { revealSecret, rotateSecret } from '../../webhooks/configuration/secret'
import { card, facts, heading, postButton, status } from '../components'
import { isoFromLocal, NO_ERRORS, orInPlace } from '../forms'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { layout } from '../layout'
import { liveDiagram } from '../live-diagram'
import type { Form } from '../request'
import { freshRecoverState, recoverCard, type RecoverState } from './webhook-recover'
import { deliveriesSection, metricsSection } from './webhook-sections'

/**
 * `/namespaces/{ns}/webhooks/{id}`: state, buffered count, quarantine end, live machine,
 * delivery records, metrics, and the manager's actions (reveal, rotate, release, test send,
 * recover failed deliveries).
 */

const whPath = (ns: string, id: string, ...rest: string[]) => href('namespaces', ns, 'webhooks', id, ...rest)

/** What an action shows on the page: a secret once (reveal, rotation), the recover form's input and answer. */
interface Shown {
  secret?: { value: string; note: string }
  recover?: RecoverState
}

export async function webhookPage(req: DashboardRequest, { secret, recover }: Shown = {}): Promise<Html> {
  const { ns, principal } = req.viewer
  const id = req.params.id
  const [webhook, state, deliveries, snapshot] = await Promise.all([
    getWebhook(req.ctx, id),
    webhookState(req.ctx, id),
    listDeliveries(req.ctx, id, 25),
    req.services.webhooks.loadSnapshot(ns, id),
  ])
  const bucket = (['1m', '1h', '1d'] as const).find((b) => b === req.query.get('bucket')) ?? '1h'
  const metrics = await webhookMetrics(req.ctx, id, { bucket })
  const manage = hasNamespacePermission(principal, 'ns:webhooks:manage')
  const base = whPath(ns, id)
  const actions = manage
    ? html`${state.state === 'quarantined' ? postButton(req.viewer, `${base}/release`, 'Release quarantine', { kind: 'primary' }) : ''}
        ${postButton(req.viewer, `${base}/test`, 'Send test event')}
        ${postButton(req.viewer, `${base}/enabled`, webhook.enabled ? 'Disable' : 'Enable', { fields: { enabled: String(!webhook.enabled) }, ...(webhook.enabled ? { confirm: 'Disable this webhook? Nothing is delivered until it is enabled again.' } : { kind: 'primary' as const }) })}
        <a class="button" href="${base}/edit">Edit</a>`
    : ''
  const secretBlock = secret
    ? html`<div class="secret" role="status">
        <p>${secret.note}</p>
        <code class="break" data-testid="secret">${secret.value}</code>
        <button class="button small" type="button" data-copy="${secret.value}">Copy</button>
      </div>`
    : html`<p class="mono">${webhook.secret}</p>`
  const secretCard = manage
    ? card(
        'Signing secret',
        html`${secretBlock}
          ${webhook.secretRotatedAt ? html`<p class="small muted">Last rotated ${time(webhook.secretRotatedAt)}; the previous secret keeps signing until ${time(webhook.previousSecretValidUntil)}.</p>` : ''}
          <div class="actions">
            ${postButton(req.viewer, `${base}/secret/reveal`, 'Reveal secret')}
            ${postButton(req.viewer, `${base}/secret/rotate`, 'Rotate secret', { kind: 'danger', confirm: 'Rotate the signing secret? Receivers must learn the new one; the old one keeps signing during the overlap.' })}
          </div>`,
        'secret',
      )
    : ''
  const value = (snapshot as { value?: unknown } | null)?.value ?? state.state
  const body = html`${heading(webhook.name, actions, html`<code>${webhook.id}</code> · <span class="break">${webhook.url}</span>`)}
    <div class="grid two">
      ${card(
        'Delivery state',
        facts([
          ['State', html`<span data-live-field="state" data-testid="webhook-state">${state.state}</span>`],
          ['Buffered events', html`<span data-live-field="bufferedEvents">${state.bufferedEvents}</span>`],
          ['Quarantined until', html`<span data-live-field="quarantinedUntil">${state.quarantinedUntil ?? '—'}</span>`],
          ['Next attempt', html`<span data-live-field="nextAttemptAt">${state.nextAttemptAt ?? '—'}</span>`],
        ]),
      )}
      ${card(
        'Subscription',
        facts([
          ['Enabled', webhook.enabled ? status('active') : html`<span class="pill muted">disabled</span>`],
          ['Event types', webhook.eventTypes.join(', ')],
          ['Firewalls', webhook.firewalls.length ? webhook.firewalls.join(', ') : 'all'],
          ['Created', time(webhook.createdAt)],
        ]),
      )}
    </div>
    ${card('State machine', await liveDiagram(webhookDeliveryMachine, value, href('namespaces', ns, 'live', 'webhooks', id), 'Webhook delivery machine'), 'machine')}
    ${secretCard} ${metricsSection(base, bucket, metrics)} ${deliveriesSection(deliveries.items, base)}
    ${manage ? recoverCard(req.viewer, `${base}/recover`, recover ?? freshRecoverState(req.services.clock.now())) : ''}`
  return layout({
    title: webhook.name,
    section: 'webhooks',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [['Webhooks', href('namespaces', ns, 'webhooks')]],
    body,
  })
}

export async function revealAction(req: DashboardRequest): Promise<ActionResult> {
  const { secret } = await revealSecret(req.ctx, req.params.id)
  return { page: await webhookPage(req, { secret: { value: secret, note: 'Current signing secret:' } }) }
}

export async function rotateAction(req: DashboardRequest): Promise<ActionResult> {
  const { secret, previousSecretValidUntil } = await rotateSecret(req.ctx, req.params.id)
  return {
    page: await webhookPage(req, {
      secret: {
        value: secret,
        note: `New signing secret (the previous one signs too until ${previousSecretValidUntil}):`,
      },
    }),
  }
}

export async function releaseAction(req: DashboardRequest): Promise<ActionResult> {
  await releaseQuarantine(req.ctx, req.params.id)
  return { redirect: whPath(req.viewer.ns, req.params.id), flash: 'Quarantine released; delivery resumes now.' }
}

export async function testAction(req: DashboardRequest): Promise<ActionResult> {
  const { event } = await sendTest(req.ctx, req.params.id)
  return { redirect: whPath(req.viewer.ns, req.params.id), flash: `Test event ${event} queued for delivery.` }
}

/**
 * Recover (the API's `POST .../recover`): the window's `datetime-local` values read as UTC and
 * parsed with the API's schema; the domain refuses a window ending before it starts or starting
 * in the future. The answer (count, events past retention) is shown on the page.
 */
export async function recoverAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  // Permission first, as the API does: a crafted form from a viewer is a 403, whatever it holds.
  requireNamespacePermission(req.ctx.principal, 'ns:webhooks:manage')
  const values = { since: form.text('since') ?? '', until: form.text('until') ?? '' }
  return orInPlace(
    async () => {
      if (!values.since)
        throw invalid('validation_failed', 'since is required', [{ path: 'since', message: 'required' }])
      const window = RecoverWindow.parse({ since: isoFromLocal(values.since) ?? '', until: isoFromLocal(values.until) })
      const result = await recoverDeliveries(req.ctx, req.params.id, window)
      return { page: await webhookPage(req, { recover: { values, errors: NO_ERRORS, result } }) }
    },
    (path) => (path === 'since' || path === 'until' ? path : undefined),
    async (errors) => webhookPage(req, { recover: { values, errors } }),
  )
}
