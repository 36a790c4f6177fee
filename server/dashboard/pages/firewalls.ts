import { firewallPermissions, hasNamespacePermission } from '../../auth/permissions'
import { listFirewalls } from '../../firewall/queries'
import { usableFirewalls } from '../../firewall/usable'
import { card, heading, table } from '../components'
import type { DashboardRequest } from '../handler'
import { href, html, time } from '../html'
import { layout } from '../layout'

/** `/namespaces/{ns}/firewalls`: the firewalls the viewer can read, with what they may do. */
export async function firewallsPage(req: DashboardRequest) {
  const { ns, principal } = req.viewer
  const [firewalls, usable] = await Promise.all([listFirewalls(req.ctx), usableFirewalls(req.ctx)])
  // Firewalls the viewer installs through without reading their configuration: listed too, so
  // a developer never meets an empty page.
  const useOnly = usable.filter((fw) => !fw.readable)
  const rows = firewalls.map((fw) => {
    const held = [...firewallPermissions(principal, fw)].map((p) => p.replace(/^fw:/, ''))
    return [
      html`<a href="${href('namespaces', ns, 'firewalls', fw.id)}"><strong>${fw.name}</strong></a>
        <div class="muted small">${fw.id}</div>`,
      html`<span class="badge">${fw.ecosystem}</span>`,
      html`v${fw.version}`,
      String(fw.rules.length),
      String(fw.exceptions.length),
      time(fw.updatedAt),
      html`<span class="small muted">${held.join(', ')}</span>`,
    ]
  })
  const create = hasNamespacePermission(principal, 'ns:firewalls:create')
    ? html`<a class="button primary" href="${href('namespaces', ns, 'firewalls', 'new')}">New firewall</a>`
    : ''
  const body = html`${heading('Firewalls', create, `${firewalls.length} firewall${firewalls.length === 1 ? '' : 's'} you can read in ${ns}`)}
    <section class="card">
      ${table('Firewalls', ['Firewall', 'Ecosystem', 'Version', 'Rules', 'Exceptions', 'Updated', 'Your permissions'], rows, useOnly.length ? 'No firewall whose configuration you can read.' : 'No firewall you can read yet.')}
    </section>
    ${
      useOnly.length
        ? card(
            'Firewalls you can install through',
            table(
              'Firewalls you can install through',
              ['Firewall', 'Ecosystem', ''],
              useOnly.map((fw) => [
                html`<a href="${href('namespaces', ns, 'firewalls', fw.id)}"><strong>${fw.name}</strong></a>
                  <div class="muted small">${fw.id}</div>`,
                html`<span class="badge">${fw.ecosystem}</span>`,
                html`<a class="button small" href="${href('namespaces', ns, 'firewalls', fw.id)}#clients"
                  >Client configuration</a
                >`,
              ]),
            ),
            'usable',
          )
        : ''
    }`
  return layout({ title: 'Firewalls', section: 'firewalls', viewer: req.viewer, flash: req.flash, body })
}
