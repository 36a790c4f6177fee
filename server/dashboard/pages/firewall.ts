import { firewallPermissions } from '../../auth/permissions'
import { deleteMember } from '../../firewall/commands'
import { getFirewall } from '../../firewall/queries'
import type { Exception, Firewall, FirewallPermission, Rule } from '../../firewall/schema'
import { card, facts, heading, postButton, status, table } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { layout, type Viewer } from '../layout'
import { advisoryWarning } from '../advisory-warning'
import { firewallChain } from '../../registry/firewall-chain'
import { firewall as firewallAccess } from '../../http/access'
import { expectedVersion } from '../firewall-edit'
import type { Form } from '../request'
import { clientConfig } from '../client-config'
import { DomainError } from '../../common/errors'
import { firewallUsePage } from './firewall-use'

/** `/namespaces/{ns}/firewalls/{fw}`: configuration, rules, exceptions with expiry, permissions. */

const fwPath = (ns: string, fw: string, ...rest: string[]) => href('namespaces', ns, 'firewalls', fw, ...rest)

/** One-line summary of a rule selector (the full JSON is in the row's details). */
function selectorSummary(selector: Rule['selector']): string {
  const fn = selector.function as Record<string, unknown> & { name: string }
  const args = Object.entries(fn)
    .filter(([key]) => key !== 'name' && key !== 'selectors' && key !== 'selector')
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('|') : String(value)}`)
  return `${fn.name}(${args.join(', ')})`
}

/** "expired", or how long until it expires; exceptions without `expires` never do. */
function expiry(expires: string | undefined, now: number): Html {
  if (!expires) return html`<span class="muted">never</span>`
  const left = Date.parse(expires) - now
  if (left <= 0) return html`${status('expired')} ${time(expires)}`
  const days = Math.floor(left / 86_400_000)
  const hours = Math.floor(left / 3_600_000)
  return html`${time(expires)} <span class="small muted">(in ${days >= 1 ? `${days} d` : `${hours} h`})</span>`
}

function rulesTable(viewer: Viewer, fw: Firewall, canEdit: boolean) {
  return table(
    'Rules',
    ['Rule', 'Phase', 'Selector', 'Effect', 'Description'],
    fw.rules.map((rule) => [
      canEdit
        ? html`<a href="${fwPath(viewer.ns, fw.id, 'rules', rule.id, 'edit')}" title="Edit rule ${rule.id}"
            ><code>${rule.id}</code></a
          >`
        : html`<code>${rule.id}</code>`,
      rule.executionPhase,
      html`<details>
        <summary><code>${selectorSummary(rule.selector)}</code></summary>
        <pre class="code">${JSON.stringify(rule.selector, null, 2)}</pre>
      </details>`,
      html`${rule.ruleEffect.block ? status('blocked') : html`<span class="pill muted">allow</span>`}
      ${rule.ruleEffect.log ? html`<span class="pill muted">log</span>` : ''}`,
      rule.description,
    ]),
    'No rules.',
  )
}

function exceptionsTable(viewer: Viewer, fw: Firewall, canEdit: boolean, now: number) {
  return table(
    'Exceptions',
    ['Exception', 'Rule', 'Package', 'Reason', 'Expires', 'Notes', ...(canEdit ? [''] : [])],
    fw.exceptions.map((ex: Exception) => [
      canEdit
        ? html`<a href="${fwPath(viewer.ns, fw.id, 'exceptions', ex.id, 'edit')}" title="Edit exception ${ex.id}"
            ><code>${ex.id}</code></a
          >`
        : html`<code>${ex.id}</code>`,
      html`<code>${ex.rule}</code>`,
      html`${ex.selector.packageName}${ex.selector.version ? html`<span class="muted">@${ex.selector.version}</span>` : ''}`,
      ex.reason ?? '',
      expiry(ex.expires, now),
      ex.notes ?? '',
      ...(canEdit
        ? [
            postButton(viewer, fwPath(viewer.ns, fw.id, 'exceptions', ex.id, 'delete'), 'Remove', {
              kind: 'danger',
              confirm: `Remove exception ${ex.id}?`,
              fields: { version: String(fw.version) },
            }),
          ]
        : []),
    ]),
    'No exceptions.',
  )
}

/** A refusal for want of `fw:read` alone: the viewer may still use the firewall (firewall-use.ts). */
const lacksRead = (error: unknown) =>
  error instanceof DomainError && error.kind === 'forbidden' && error.details.permission === 'fw:read'

export async function firewallPage(req: DashboardRequest) {
  const { ns, principal } = req.viewer
  let fw: Firewall
  try {
    fw = await getFirewall(req.ctx, req.params.fw)
  } catch (error) {
    if (lacksRead(error)) return firewallUsePage(req)
    throw error
  }
  const held = firewallPermissions(principal, fw)
  const now = req.services.clock.now()
  const may = (permission: FirewallPermission) => held.has(permission)
  const add = (permission: FirewallPermission, path: string, label: string) =>
    may(permission)
      ? html`<p class="actions">
          <a class="button small" href="${fwPath(ns, fw.id, ...path.split('/'))}">${label}</a>
        </p>`
      : ''
  const links = html`${[...held].some((p) => p.startsWith('fw:update:') || p === 'fw:clone' || p === 'fw:delete') ? html`<a class="button" href="${fwPath(ns, fw.id, 'settings')}">Settings</a>` : ''}
    <a class="button" href="${fwPath(ns, fw.id, 'history')}">History</a>
    <a class="button" href="${fwPath(ns, fw.id, 'log')}">Log</a>
    <a class="button" href="${fwPath(ns, fw.id, 'inventory')}">Inventory</a>
    <a class="button" href="${href('namespaces', ns, 'exposures')}?firewall=${encodeURIComponent(fw.id)}">Exposures</a>
    <a class="button" href="${fwPath(ns, fw.id, 'exception-requests')}">Exception requests</a>`
  const upstreams = table(
    'Upstreams',
    ['Upstream', 'Endpoint', 'Internal', 'Cached', 'Credentials'],
    fw.upstreams.map((u) => [
      may('fw:update:config') || may('fw:update:credentials')
        ? html`<a href="${fwPath(ns, fw.id, 'upstreams', u.id, 'edit')}" title="Edit upstream ${u.id}"
            ><code>${u.id}</code></a
          >`
        : html`<code>${u.id}</code>`,
      html`<span class="break">${u.endpoint}</span>`,
      u.internal ? 'yes' : 'no',
      u.cached ? 'yes' : 'no',
      u.credentials
        ? html`<span class="muted">${Object.keys(u.credentials).join(', ')} (redacted)</span>`
        : html`<span class="muted">none</span>`,
    ]),
    'No upstreams.',
  )
  const permissions = table(
    'Permissions',
    ['Principal', 'Permissions'],
    Object.entries(fw.permissions).map(([key, perms]) => [html`<code>${key}</code>`, perms.join(', ')]),
    'No permission entries.',
  )
  // Rules inherited through `extends` decide too, so they count for the advisory data warning.
  const chain = (await firewallChain(req.services, ns, fw)).map((layer) => layer.firewall)
  const body = html`${heading(fw.name, links, html`<code>${fw.id}</code> · version <strong data-testid="fw-version">${fw.version}</strong> · updated ${time(fw.updatedAt)}`)}
  ${advisoryWarning(chain, req.services.advisories.status())}
  ${card(
    'Configuration',
    facts([
      ['Ecosystem', html`<span class="badge">${fw.ecosystem}</span>`],
      ['Description', fw.description || html`<span class="muted">—</span>`],
      ['Extends', fw.extends.length ? fw.extends.join(', ') : html`<span class="muted">—</span>`],
      ['Your permissions', [...held].join(', ')],
    ]),
  )}
  ${card(`Rules (${fw.rules.length})`, html`${rulesTable(req.viewer, fw, may('fw:update:rule'))}${add('fw:update:rule', 'rules/new', 'Add rule')}`, 'rules')}
  ${card(`Exceptions (${fw.exceptions.length})`, html`${exceptionsTable(req.viewer, fw, may('fw:update:exception'), now)}${add('fw:update:exception', 'exceptions/new', 'Add exception')}`, 'exceptions')}
  ${card('Use this firewall', clientConfig(req, fw), 'clients')}
  ${card('Upstreams', html`${upstreams}${add('fw:update:config', 'upstreams/new', 'Add upstream')}`, 'upstreams')}
  ${card('Permissions', html`${permissions}${add('fw:update:config', 'permissions', 'Edit permissions')}`, 'permissions')}`
  return layout({
    title: fw.name,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [['Firewalls', href('namespaces', ns, 'firewalls')]],
    body,
  })
}

/** POST `.../exceptions/{id}/delete`: the version the viewer saw guards against removing from a changed firewall. */
export async function removeException(req: DashboardRequest, form: Form): Promise<ActionResult> {
  await firewallAccess('fw:update:exception')(req.ctx, req.params)
  await deleteMember(req.ctx, req.params.fw, 'exceptions', req.params.exceptionId, expectedVersion(form))
  return {
    redirect: fwPath(req.viewer.ns, req.params.fw) + '#exceptions',
    flash: `Exception ${req.params.exceptionId} removed.`,
  }
}
