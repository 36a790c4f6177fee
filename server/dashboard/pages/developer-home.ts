import { listOwnExceptionRequests } from '../../exception-requests'
import { ownRecentBlocks } from '../../firewall/own-blocks'
import { usableFirewalls, type UsableFirewall } from '../../firewall/usable'
import { clientConfig } from '../client-config'
import { card, heading, status, table } from '../components'
import type { DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { layout } from '../layout'
import { requestStateInWords } from '../request-words'

/**
 * A developer's home (`/namespaces/{ns}/mine`, and the namespace home of a caller who reads no
 * firewall): the firewalls they may install through with the client configuration filled in,
 * their own exception requests with where each stands, and their recent blocks, each with its
 * "request an exception" link. Every link leads to a page the viewer may read.
 */

/** How far back "recent blocks" reaches, and how many are listed. */
const BLOCK_DAYS = 14
const BLOCKS_SHOWN = 20
const REQUESTS_SHOWN = 50

const requestLink = (ns: string, fw: string, ...rest: string[]) =>
  href('namespaces', ns, 'firewalls', fw, 'exception-requests', ...rest)

function firewallsCard(req: DashboardRequest, firewalls: UsableFirewall[]): Html {
  const { ns } = req.viewer
  if (!firewalls.length)
    return card(
      'Firewalls you can install through',
      html`<p class="empty">
        None yet. Ask a firewall's owner to give you (or one of your teams) access to it; until then installs through it
        answer "not found, or you have no access to it".
      </p>`,
      'my-firewalls',
    )
  return card(
    `Firewalls you can install through (${firewalls.length})`,
    html`${firewalls.map(
      (fw, index) =>
        html`<details class="firewall-use" data-testid="usable-firewall" ${index === 0 ? html` open` : ''}>
          <summary>
            <strong>${fw.name}</strong> <span class="badge">${fw.ecosystem}</span>
            <span class="muted small">${fw.id}</span>
          </summary>
          ${fw.description ? html`<p>${fw.description}</p>` : ''} ${clientConfig(req, fw)}
          <p class="actions">
            <a class="button small" href="${href('namespaces', ns, 'firewalls', fw.id)}">Open ${fw.name}</a>
            <a class="button small" href="${requestLink(ns, fw.id, 'new')}">Request an exception</a>
          </p>
        </details>`,
    )}`,
    'my-firewalls',
  )
}

async function requestsCard(req: DashboardRequest, firewalls: UsableFirewall[]): Promise<Html> {
  const { ns, principal } = req.viewer
  const requests = await listOwnExceptionRequests(
    req.ctx,
    firewalls.map((fw) => fw.id),
    REQUESTS_SHOWN,
  )
  const rows = requests.map((r) => {
    const selector = r.proposedException.selector
    return [
      html`<a href="${requestLink(ns, r.firewallId, r.id)}"
        ><strong>${selector.packageName}</strong
        >${selector.version ? html`<span class="muted">@${selector.version}</span>` : ''}</a
      >`,
      r.firewallId,
      status(r.status),
      html`<span data-testid="request-words">${requestStateInWords(r, principal.id)}</span>`,
      time(r.requestedAt),
    ]
  })
  return card(
    'Your exception requests',
    table(
      'Your exception requests',
      ['Package', 'Firewall', 'State', 'What it means', 'Asked'],
      rows,
      'You have not asked for an exception yet. When an install is blocked, its message links the form.',
    ),
    'my-requests',
  )
}

async function blocksCard(req: DashboardRequest, firewalls: UsableFirewall[]): Promise<Html> {
  const { ns } = req.viewer
  const since = new Date(req.services.clock.now() - BLOCK_DAYS * 24 * 3600_000).toISOString()
  const blocks = await ownRecentBlocks(
    req.ctx,
    firewalls.map((fw) => fw.id),
    { since, limit: BLOCKS_SHOWN },
  )
  const rows = blocks.map((b) => [
    html`<strong>${b.packageName}</strong><span class="muted">@${b.version}</span>`,
    b.firewall,
    html`<span class="small">${b.message}</span>`,
    time(b.time),
    html`<a class="button small" href="${requestLink(ns, b.firewall, 'new')}?request=${encodeURIComponent(b.requestId)}"
      >Request an exception</a
    >`,
  ])
  return card(
    `Your recent blocks (last ${BLOCK_DAYS} days)`,
    table(
      'Your recent blocks',
      ['Package', 'Firewall', 'Why', 'When', ''],
      rows,
      'Nothing of yours was blocked recently.',
    ),
    'my-blocks',
  )
}

/**
 * The three sections, for any page that shows them (the namespace overview may embed them).
 * @example html`${await developerSections(req)}`
 */
export async function developerSections(req: DashboardRequest): Promise<Html> {
  const firewalls = await usableFirewalls(req.ctx)
  const [requests, blocks] = await Promise.all([requestsCard(req, firewalls), blocksCard(req, firewalls)])
  return html`${blocks} ${requests} ${firewallsCard(req, firewalls)}`
}

/** `/namespaces/{ns}/mine` */
export async function developerHomePage(req: DashboardRequest): Promise<Html> {
  const body = html`${heading('Your access', '', html`What you can install through in <strong>${req.viewer.ns}</strong>, what was blocked and what you asked for.`)}
  ${await developerSections(req)}`
  return layout({ title: 'Your access', section: 'mine', viewer: req.viewer, flash: req.flash, body })
}
