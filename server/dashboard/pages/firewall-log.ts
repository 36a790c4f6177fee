import { queryFirewallLog } from '../../firewall/log'
import { invalid } from '../../common/errors'
import { getFirewall } from '../../firewall/queries'
import { card, heading, status, table } from '../components'
import type { DashboardRequest } from '../handler'
import { href, html, time } from '../html'
import { layout } from '../layout'

/** `/namespaces/{ns}/firewalls/{fw}/log`: decisions newest first, filtered, paged by cursor. */

const PAGE = 50

/** A `datetime-local` value (no zone; read as UTC) or an ISO string, as ISO; undefined when empty. */
function instant(value: string | null, field: string): string | undefined {
  if (!value) return undefined
  const iso = /[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`
  const ms = Date.parse(iso)
  if (Number.isNaN(ms))
    throw invalid('invalid_filter', `${field} is not a valid time`, [{ path: field, message: 'not a valid time' }])
  return new Date(ms).toISOString()
}

const localValue = (value: string | null) => (value ? value.replace(/Z$/, '').slice(0, 16) : '')

export async function firewallLogPage(req: DashboardRequest) {
  const { ns } = req.viewer
  const fw = await getFirewall(req.ctx, req.params.fw)
  const q = req.query
  const blocked = q.get('blocked') === 'true' ? true : q.get('blocked') === 'false' ? false : undefined
  const filter = {
    since: instant(q.get('since'), 'since'),
    until: instant(q.get('until'), 'until'),
    packageName: q.get('packageName')?.trim() || undefined,
    blocked,
    requestId: q.get('requestId')?.trim() || undefined,
  }
  const page = await queryFirewallLog(req.ctx, fw.id, { ...filter, limit: PAGE, cursor: q.get('cursor') })
  const rows = page.entries.map((e) =>
    e.outcome === 'upstream_error'
      ? [
          time(e.time),
          html`<code class="small">${e.method ?? ''} ${e.path ?? ''}</code>`,
          status('upstream error'),
          html`<span class="small">${e.outcome}</span>`,
          html`<span class="muted">—</span>`,
          '',
          html`<span class="small">upstream <code>${e.upstream}</code></span>`,
          html`<span class="small">${e.user}</span>`,
          html`<span class="small">${e.message}</span>`,
        ]
      : [
          time(e.time),
          html`<strong>${e.packageName}</strong><span class="muted">@${e.version}</span>`,
          e.blocked && e.rule
            ? html`${status('blocked')}
                <a
                  class="button small"
                  href="${href('namespaces', ns, 'firewalls', fw.id, 'exception-requests', 'new')}?request=${encodeURIComponent(e.request)}"
                  >Request exception</a
                >`
            : status(e.blocked ? 'blocked' : 'allowed'),
          html`<span class="small">${e.outcome}</span>`,
          e.rule ? html`<code>${e.rule}</code>` : html`<span class="muted">—</span>`,
          e.exception ? html`<code>${e.exception}</code>` : '',
          e.executionPhase,
          html`<span class="small">${e.user}</span>`,
          html`<span class="small">${e.message}</span>`,
        ],
  )
  const next = new URLSearchParams(q)
  if (page.nextCursor) next.set('cursor', page.nextCursor)
  const form = html`<form method="get" class="filters" action="${href('namespaces', ns, 'firewalls', fw.id, 'log')}">
    <label>Since (UTC) <input type="datetime-local" name="since" value="${localValue(q.get('since'))}" /></label>
    <label>Until (UTC) <input type="datetime-local" name="until" value="${localValue(q.get('until'))}" /></label>
    <label>Package <input name="packageName" value="${q.get('packageName') ?? ''}" placeholder="exact name" /></label>
    <label
      >Request id
      <input type="search" name="requestId" value="${q.get('requestId') ?? ''}" placeholder="req-..." maxlength="200"
    /></label>
    <label
      >Decision
      <select name="blocked">
        <option value="">any</option>
        <option value="true" ${blocked === true ? ' selected' : ''}>blocked</option>
        <option value="false" ${blocked === false ? ' selected' : ''}>allowed</option>
      </select></label
    >
    <div class="actions">
      <button class="button primary" type="submit">Filter</button>
      <a class="button subtle" href="${href('namespaces', ns, 'firewalls', fw.id, 'log')}">Clear</a>
    </div>
  </form>`
  const body = html`${heading(html`Log of ${fw.name}`, html`<a class="button" href="${href('namespaces', ns, 'firewalls', fw.id)}">Configuration</a>`, 'Every decision the firewall made, and every failed call to an upstream, newest first.')}
  ${card('Filters', form)}
  ${card(
    'Decisions',
    html`${table('Decisions', ['Time', 'Package', 'Decision', 'Outcome', 'Rule', 'Exception', 'Phase', 'User', 'Message'], rows, 'No decisions match these filters.')}
    ${page.nextCursor ? html`<p><a class="button" href="?${next.toString()}">Older entries →</a></p>` : ''}`,
  )}`
  return layout({
    title: `Log of ${fw.name}`,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [
      ['Firewalls', href('namespaces', ns, 'firewalls')],
      [fw.name, href('namespaces', ns, 'firewalls', fw.id)],
    ],
    body,
  })
}
