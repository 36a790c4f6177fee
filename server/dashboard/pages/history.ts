import { canOnFirewall } from '../../auth/permissions'
import { invalid } from '../../common/errors'
import { rollback } from '../../firewall/commands'
import { firewallHistory, firewallVersion, getFirewall } from '../../firewall/queries'
import { card, heading, table } from '../components'
import { diffView } from '../diff-view'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'
import { firewall as firewallAccess } from '../../http/access'
import { expectedVersion } from '../firewall-edit'

/** Version history with a diff between any two versions, and rollback with confirmation. */

const fwPath = (ns: string, fw: string, ...rest: (string | number)[]) =>
  href('namespaces', ns, 'firewalls', fw, ...rest)

function versionParam(value: string | null | undefined, fallback: number, max: number): number {
  const n = Number(value)
  return Number.isInteger(n) && n >= 1 && n <= max ? n : fallback
}

/** Versions listed per page of the history. */
const HISTORY_PAGE = 20

/**
 * `/namespaces/{ns}/firewalls/{fw}/history?from=&to=&before=`: the diff between two versions
 * first (the compare form and the row links land on it), then the version list, a page of
 * `HISTORY_PAGE` at a time (`before`: list versions older than this one).
 */
export async function historyPage(req: DashboardRequest) {
  const { ns, principal } = req.viewer
  const fw = await getFirewall(req.ctx, req.params.fw)
  const beforeParam = Number(req.query.get('before'))
  const before = Number.isInteger(beforeParam) && beforeParam > 1 && beforeParam <= fw.version ? beforeParam : undefined
  const entries = await firewallHistory(req.ctx, fw.id, HISTORY_PAGE, before)
  const to = versionParam(req.query.get('to'), fw.version, fw.version)
  const from = versionParam(req.query.get('from'), Math.max(1, to - 1), fw.version)
  const [beforeVersion, after] = await Promise.all([
    firewallVersion(req.ctx, fw.id, from),
    firewallVersion(req.ctx, fw.id, to),
  ])
  const mayRollBack = canOnFirewall(principal, fw, 'fw:update:config')
  const link = (params: { from?: number; to?: number; before?: number }) => {
    const search = new URLSearchParams()
    for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value))
    return `${fwPath(ns, fw.id, 'history')}?${search}`
  }
  const rows = entries.map((entry) => [
    html`<strong>v${entry.version}</strong
      >${entry.version === fw.version ? html` <span class="pill ok">current</span>` : ''}`,
    time(entry.updatedAt),
    entry.actor?.userId ?? html`<span class="muted">system</span>`,
    entry.summary,
    html`<label class="choice"
        ><input
          type="radio"
          name="from"
          value="${entry.version}"
          form="compare"
          ${entry.version === from ? ' checked' : ''}
        />
        from</label
      >
      <label class="choice"
        ><input
          type="radio"
          name="to"
          value="${entry.version}"
          form="compare"
          ${entry.version === to ? ' checked' : ''}
        />
        to</label
      >
      ${entry.version > 1 ? html`<a class="small" href="${link({ from: entry.version - 1, to: entry.version, before })}#diff">changes in v${entry.version}</a>` : ''}`,
    mayRollBack && entry.version !== fw.version
      ? html`<a class="button small" href="${fwPath(ns, fw.id, 'versions', entry.version, 'rollback')}"
          >Roll back to v${entry.version}</a
        >`
      : '',
  ])
  const oldest = entries.at(-1)?.version
  const newest = entries[0]?.version
  const newer =
    newest !== undefined && newest < fw.version ? Math.min(fw.version + 1, newest + HISTORY_PAGE + 1) : undefined
  const pager = html`<nav class="pager actions" aria-label="Version pages">
    ${newer !== undefined ? html`<a class="button small" href="${link({ from, to, before: newer > fw.version ? undefined : newer })}" rel="prev">Newer versions</a>` : ''}
    <span class="small muted">v${newest ?? '-'} to v${oldest ?? '-'} of ${fw.version}</span>
    ${oldest !== undefined && oldest > 1 && entries.length === HISTORY_PAGE ? html`<a class="button small" href="${link({ from, to, before: oldest })}" rel="next">Older versions</a>` : ''}
  </nav>`
  const body = html`${heading(html`History of ${fw.name}`, html`<a class="button" href="${fwPath(ns, fw.id)}">Configuration</a>`, html`<code>${fw.id}</code> · current version <strong data-testid="fw-version">${fw.version}</strong>`)}
  ${card(`Diff v${from} → v${to}`, diffView(beforeVersion, after, [`v${from}`, `v${to}`]), 'diff')}
  ${card(
    'Versions',
    html`<form id="compare" method="get" action="${fwPath(ns, fw.id, 'history')}#diff" class="toolbar">
        ${before !== undefined ? html`<input type="hidden" name="before" value="${before}" />` : ''}
        <p class="small muted">Pick a “from” and a “to” version, then compare; the diff shows above.</p>
        <button class="button primary" type="submit">Compare</button>
      </form>
      ${table('Versions', ['Version', 'Updated', 'By', 'Change', 'Compare', ''], rows)} ${pager}`,
    'versions',
  )}`
  return layout({
    title: `History of ${fw.name}`,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [
      ['Firewalls', href('namespaces', ns, 'firewalls')],
      [fw.name, fwPath(ns, fw.id)],
    ],
    body,
  })
}

/** `GET .../versions/{v}/rollback`: what the rollback would change, and the confirming form. */
export async function rollbackConfirmPage(req: DashboardRequest) {
  const { ns } = req.viewer
  const fw = await getFirewall(req.ctx, req.params.fw)
  const version = Number(req.params.version)
  const target = await firewallVersion(req.ctx, fw.id, version)
  const form = html`<form method="post" action="${fwPath(ns, fw.id, 'versions', version, 'rollback')}" class="stack">
    ${csrfField(req.viewer)}
    <input type="hidden" name="expectedVersion" value="${fw.version}" />
    <p>
      Rolling back creates <strong>version ${fw.version + 1}</strong> with the configuration of version ${version}.
      Nothing is deleted; you can roll forward again later.
    </p>
    <div class="actions">
      <button class="button danger" type="submit">Confirm rollback to v${version}</button>
      <a class="button" href="${fwPath(ns, fw.id, 'history')}">Cancel</a>
    </div>
  </form>`
  const body = html`${heading(html`Roll back ${fw.name} to v${version}?`)} ${card('Confirm', form)}
  ${card(`Changes (current v${fw.version} → v${version})`, diffView(fw, target, [`v${fw.version}`, `v${version}`]))}`
  return layout({
    title: 'Confirm rollback',
    section: 'firewalls',
    viewer: req.viewer,
    crumbs: [
      ['Firewalls', href('namespaces', ns, 'firewalls')],
      [fw.name, fwPath(ns, fw.id)],
      ['History', fwPath(ns, fw.id, 'history')],
    ],
    body,
  })
}

/** POST `.../versions/{v}/rollback`: refused (412) when the firewall changed since the confirmation page. */
export async function rollbackAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const version = Number(req.params.version)
  if (!Number.isInteger(version) || version < 1) throw invalid('invalid_version', 'version must be a positive integer')
  await firewallAccess('fw:update:config')(req.ctx, req.params)
  const result = await rollback(req.ctx, req.params.fw, version, expectedVersion(form, 'expectedVersion'))
  return {
    redirect: fwPath(req.viewer.ns, req.params.fw, 'history'),
    flash: `Rolled back to version ${version}: the firewall is now at version ${result.version}.`,
  }
}
