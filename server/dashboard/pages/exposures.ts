import { firewallPermissions } from '../../auth/permissions'
import type { ExposureData as Exposure } from '../../events/schemas'
import { acknowledgeExposure, listExposures } from '../../exposures/queries'
import { listFirewalls } from '../../firewall/queries'
import { invalid } from '../../common/errors'
import { card, heading, status, table } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/**
 * `/namespaces/{ns}/exposures`: served versions that advisory data named after they were served,
 * filtered by status and firewall, each acknowledged (with a comment) from its row.
 */

const PAGE = 50
const STATUSES = ['open', 'acknowledged', 'all'] as const
type StatusTab = (typeof STATUSES)[number]
/** Longest acknowledgement comment (the API's bound). */
const COMMENT_MAX = 2000

const tabOf = (value: string | null): StatusTab =>
  STATUSES.includes(value as StatusTab) ? (value as StatusTab) : 'open'

function advisoryCell(e: Exposure): Html {
  const { advisory } = e
  return html`<strong>${advisory.id}</strong>
    <span class="pill ${advisory.kind === 'malware' ? 'bad' : 'warn'}">${advisory.kind}</span>
    ${advisory.severity ? html`<span class="small">${advisory.severity}</span>` : ''}
    ${advisory.aliases.length ? html`<div class="muted small">${advisory.aliases.join(', ')}</div>` : ''}`
}

function stateCell(req: DashboardRequest, e: Exposure, mayAcknowledge: boolean, back: string): Html {
  if (e.status === 'acknowledged')
    return html`${status('acknowledged')}
      <div class="small">${e.acknowledgedBy ?? ''} ${time(e.acknowledgedAt)}</div>
      ${e.comment ? html`<div class="small">${e.comment}</div>` : ''}`
  if (!mayAcknowledge) return status('open')
  const action = href('namespaces', req.viewer.ns, 'exposures', e.id, 'acknowledge')
  return html`${status('open')}
    <form method="post" action="${action}" class="inline-form" data-testid="acknowledge-${e.id}">
      ${csrfField(req.viewer)}<input type="hidden" name="back" value="${back}" />
      <label class="visually-hidden" for="comment-${e.id}">Comment on ${e.id}</label>
      <input id="comment-${e.id}" name="comment" maxlength="${COMMENT_MAX}" placeholder="Comment (optional)" />
      <button class="button small primary" type="submit">Acknowledge</button>
    </form>`
}

export async function exposuresPage(req: DashboardRequest) {
  const { ns, principal } = req.viewer
  const tab = tabOf(req.query.get('status'))
  const firewall = req.query.get('firewall') || undefined
  const firewalls = await listFirewalls(req.ctx)
  const page = await listExposures(req.ctx, {
    firewall,
    status: tab === 'all' ? undefined : tab,
    limit: PAGE,
    cursor: req.query.get('cursor') || undefined,
  })
  const base = href('namespaces', ns, 'exposures')
  const may = new Map(firewalls.map((fw) => [fw.id, firewallPermissions(principal, fw).has('fw:update:exception')]))
  const here = `${base}?${new URLSearchParams(req.query)}`
  const rows = page.exposures.map((e) => [
    time(e.detectedAt),
    html`<a href="${href('namespaces', ns, 'firewalls', e.firewall)}">${e.firewall}</a>`,
    html`<strong>${e.packageName}</strong><span class="muted">@${e.version}</span>`,
    advisoryCell(e),
    html`${time(e.firstServedAt)} – ${time(e.lastServedAt)}`,
    html`<span class="small">${e.servedTo.join(', ')}</span>`,
    stateCell(req, e, may.get(e.firewall) ?? false, here),
  ])
  const query = (status: StatusTab) => new URLSearchParams({ status, ...(firewall ? { firewall } : {}) })
  const tabs = html`<nav class="tabs" aria-label="Status">
    ${STATUSES.map((s) => html`<a href="${base}?${query(s).toString()}" ${s === tab ? html` aria-current="page"` : ''}>${s}</a>`)}
  </nav>`
  const filter = html`<form method="get" class="filters" action="${base}">
    <input type="hidden" name="status" value="${tab}" />
    <label
      >Firewall
      <select name="firewall">
        <option value="">every firewall</option>
        ${firewalls.map((fw) => html`<option value="${fw.id}" ${fw.id === firewall ? ' selected' : ''}>${fw.name}</option>`)}
      </select></label
    >
    <div class="actions"><button class="button" type="submit">Filter</button></div>
  </form>`
  const next = new URLSearchParams(req.query)
  if (page.nextCursor) next.set('cursor', page.nextCursor)
  const body = html`${heading(
    'Exposures',
    '',
    'Versions your firewalls served that advisory data named as malicious or vulnerable afterwards: who pulled them, and when.',
  )}
  ${tabs} ${card('Filter', filter)}
  ${card(
    `Exposures (${page.exposures.length}${page.nextCursor ? '+' : ''})`,
    html`${table(
      'Exposures',
      ['Detected', 'Firewall', 'Package', 'Advisory', 'Served', 'Served to', 'Status'],
      rows,
      tab === 'open' ? 'No open exposure.' : 'No exposure with this status.',
    )}
    ${page.nextCursor ? html`<p><a class="button" href="?${next.toString()}">Next page →</a></p>` : ''}`,
    'exposures',
  )}`
  return layout({ title: 'Exposures', section: 'exposures', viewer: req.viewer, flash: req.flash, body })
}

/** POST `/namespaces/{ns}/exposures/{id}/acknowledge` with an optional `comment`. */
export async function acknowledgeAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const comment = form.text('comment')
  if (comment && comment.length > COMMENT_MAX)
    throw invalid('invalid_body', `comment is longer than ${COMMENT_MAX} characters`, [
      { path: 'comment', message: `at most ${COMMENT_MAX} characters` },
    ])
  const exposure = await acknowledgeExposure(req.ctx, req.params.id, comment)
  const back = form.get('back')
  const base = href('namespaces', req.viewer.ns, 'exposures')
  return {
    redirect: back && back.startsWith(`${base}?`) ? back : base,
    flash: `Acknowledged ${exposure.advisory.id} for ${exposure.packageName}@${exposure.version} on ${exposure.firewall}.`,
  }
}
