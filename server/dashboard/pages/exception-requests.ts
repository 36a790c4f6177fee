import { canSeeFirewall } from '../../auth/permissions'
import { DomainError } from '../../common/errors'
import { listExceptionRequests, type ExceptionRequestView } from '../../exception-requests'
import { card, heading, status, table } from '../components'
import type { DashboardRequest } from '../handler'
import { href, html, time } from '../html'
import { layout } from '../layout'

/** The review queue: pending requests (or another status) of one firewall or of every visible one. */

const STATUSES = ['pending', 'denied', 'approved', 'withdrawn'] as const

function statusFilter(value: string | null): (typeof STATUSES)[number][] | undefined {
  if (value === 'all') return undefined
  return STATUSES.includes(value as never) ? [value as (typeof STATUSES)[number]] : ['pending']
}

/** Requests of `firewallIds` in `statuses`, oldest first; firewalls the viewer may not list add nothing. */
export async function requestsOf(
  req: DashboardRequest,
  firewallIds: string[],
  statuses: ReturnType<typeof statusFilter>,
) {
  const lists = await Promise.all(
    firewallIds.map(async (fw) => {
      try {
        return (await listExceptionRequests(req.ctx, fw, { status: statuses, limit: 200 })).items
      } catch (error) {
        // A firewall whose requests the viewer may not list simply contributes nothing.
        if (error instanceof DomainError && (error.kind === 'forbidden' || error.kind === 'not_found')) return []
        throw error
      }
    }),
  )
  return lists.flat().sort((a, b) => a.requestedAt.localeCompare(b.requestedAt))
}

/** The requests as the review queue's table. */
export function queue(req: DashboardRequest, items: ExceptionRequestView[]) {
  const { ns } = req.viewer
  return table(
    'Exception requests',
    ['Request', 'Firewall', 'Package', 'Rule', 'Requested by', 'Requested', 'Status', ''],
    items.map((r) => {
      const link = href('namespaces', ns, 'firewalls', r.firewallId, 'exception-requests', r.id)
      return [
        html`<a href="${link}"><code>${r.id}</code></a>`,
        html`<a href="${href('namespaces', ns, 'firewalls', r.firewallId)}">${r.firewallId}</a>`,
        html`<strong>${r.proposedException.selector.packageName}</strong
          >${r.proposedException.selector.version ? html`<span class="muted">@${r.proposedException.selector.version}</span>` : ''}`,
        html`<code>${r.proposedException.rule}</code>`,
        r.requestedBy,
        time(r.requestedAt),
        status(r.status),
        r.canApprove || r.canDeny
          ? html`<a class="button small primary" href="${link}">Review</a>`
          : html`<a class="button small" href="${link}">Open</a>`,
      ]
    }),
    'No requests with this status.',
  )
}

function tabs(base: string, current: string | null) {
  const active = current ?? 'pending'
  return html`<nav class="tabs" aria-label="Status">
    ${[...STATUSES, 'all'].map((s) => html`<a href="${base}?status=${s}" ${s === active ? html` aria-current="page"` : ''}>${s}</a>`)}
  </nav>`
}

/** `/namespaces/{ns}/exception-requests?status=` */
export async function namespaceQueuePage(req: DashboardRequest) {
  const firewalls = (await req.services.firewalls.list(req.ctx.ns)).filter((fw) =>
    canSeeFirewall(req.ctx.principal, fw),
  )
  const items = await requestsOf(
    req,
    firewalls.map((fw) => fw.id),
    statusFilter(req.query.get('status')),
  )
  const body = html`${heading('Exception requests', '', 'Requests across every firewall you can see, oldest first.')}
  ${tabs(href('namespaces', req.viewer.ns, 'exception-requests'), req.query.get('status'))}
  ${card(`Requests (${items.length})`, queue(req, items))}`
  return layout({ title: 'Exception requests', section: 'requests', viewer: req.viewer, flash: req.flash, body })
}

/** `/namespaces/{ns}/firewalls/{fw}/exception-requests?status=` */
export async function firewallQueuePage(req: DashboardRequest) {
  const { ns } = req.viewer
  const fw = req.params.fw
  // Not the tolerant lookup: a firewall the viewer cannot see is a 404 here, as in the API.
  const { items } = await listExceptionRequests(req.ctx, fw, {
    status: statusFilter(req.query.get('status')),
    limit: 200,
  })
  const body = html`${heading(html`Exception requests for ${fw}`, html`<a class="button" href="${href('namespaces', ns, 'firewalls', fw)}">Configuration</a>`)}
  ${tabs(href('namespaces', ns, 'firewalls', fw, 'exception-requests'), req.query.get('status'))}
  ${card(`Requests (${items.length})`, queue(req, items))}`
  return layout({
    title: `Exception requests for ${fw}`,
    section: 'requests',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [
      ['Firewalls', href('namespaces', ns, 'firewalls')],
      [fw, href('namespaces', ns, 'firewalls', fw)],
    ],
    body,
  })
}
