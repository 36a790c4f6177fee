import { usableFirewall } from '../../firewall/usable'
import { clientConfig } from '../client-config'
import { card, heading } from '../components'
import type { DashboardRequest } from '../handler'
import { href, html, type Html } from '../html'
import { layout } from '../layout'

/**
 * `/namespaces/{ns}/firewalls/{fw}` for a viewer who may install through the firewall but not
 * read its configuration: what it is, how to configure a client for it, and where to ask for
 * an exception. Every link to a firewall therefore answers them with a page, never a 403.
 */
export async function firewallUsePage(req: DashboardRequest): Promise<Html> {
  const { ns } = req.viewer
  const fw = await usableFirewall(req.ctx, req.params.fw)
  const body = html`${heading(fw.name, html`<a class="button primary" href="${href('namespaces', ns, 'firewalls', fw.id, 'exception-requests', 'new')}">Request an exception</a>`, html`<code>${fw.id}</code> · <span class="badge">${fw.ecosystem}</span>`)}
  ${fw.description ? card('About', html`<p>${fw.description}</p>`) : ''}
  ${card('Use this firewall', clientConfig(req, fw), 'clients')}
  ${card(
    'Blocked?',
    html`<p>
      When an install is blocked, its message names the rule and links a form to ask for an exception. Your requests and
      recent blocks are on <a href="${href('namespaces', ns, 'mine')}">Your access</a>; the requests you made on this
      firewall are also
      <a href="${href('namespaces', ns, 'firewalls', fw.id, 'exception-requests')}?status=all">listed here</a>.
    </p>`,
  )}`
  return layout({
    title: fw.name,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [['Firewalls', href('namespaces', ns, 'firewalls')]],
    body,
  })
}
