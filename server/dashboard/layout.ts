import { hasNamespacePermission } from '../auth/permissions'
import type { Principal } from '../auth/principal'
import { CSRF_FIELD } from './csrf'
import { href, html, type Html, type Renderable } from './html'
import type { Flash } from './session'

/** What every signed-in page knows about its viewer. */
export interface Viewer {
  ns: string
  principal: Principal
  csrf: string
}

interface PageOptions {
  title: string
  /** Which navigation entry is current. */
  section?: Section
  viewer?: Viewer
  flash?: Flash
  /** Breadcrumb links above the heading: [label, url] pairs. */
  crumbs?: [string, string][]
  body: Renderable
}

type Section =
  | 'overview'
  | 'mine'
  | 'exposures'
  | 'firewalls'
  | 'requests'
  | 'webhooks'
  | 'teams'
  | 'users'
  | 'tokens'
  | 'license-sets'
  | 'machines'

const SECTIONS: { id: Section; label: string; path: string; visible?: (p: Principal) => boolean }[] = [
  { id: 'overview', label: 'Overview', path: '' },
  { id: 'mine', label: 'Your access', path: 'mine' },
  { id: 'firewalls', label: 'Firewalls', path: 'firewalls' },
  { id: 'requests', label: 'Exception requests', path: 'exception-requests' },
  { id: 'exposures', label: 'Exposures', path: 'exposures' },
  {
    id: 'webhooks',
    label: 'Webhooks',
    path: 'webhooks',
    visible: (p) => hasNamespacePermission(p, 'ns:webhooks:read'),
  },
  { id: 'teams', label: 'Teams', path: 'teams' },
  { id: 'users', label: 'Users', path: 'users', visible: (p) => hasNamespacePermission(p, 'ns:teams:manage') },
  { id: 'tokens', label: 'Tokens', path: 'tokens' },
  { id: 'license-sets', label: 'License sets', path: 'license-sets' },
  { id: 'machines', label: 'Machines', path: 'machines' },
]

/** The hidden CSRF field every state-changing form carries. */
export const csrfField = (viewer: Viewer): Html =>
  html`<input type="hidden" name="${CSRF_FIELD}" value="${viewer.csrf}" />`

function navigation(viewer: Viewer, current?: Section): Html {
  const links = SECTIONS.filter((s) => !s.visible || s.visible(viewer.principal)).map(
    (s) =>
      html`<li>
        <a
          href="${href('namespaces', viewer.ns, ...(s.path ? [s.path] : []))}"
          ${s.id === current ? html` aria-current="page"` : ''}
          >${s.label}</a
        >
      </li>`,
  )
  return html`<nav class="nav" aria-label="Sections">
    <ul>
      ${links}
    </ul>
  </nav>`
}

function header(viewer?: Viewer): Html {
  const who = viewer
    ? html`<div class="who">
        <span class="who-id" title="${viewer.principal.type}">${viewer.principal.id}</span>
        <span class="badge">${viewer.ns}</span>
        <form method="post" action="/sign-out" class="inline">
          ${csrfField(viewer)}<button class="button subtle" type="submit">Sign out</button>
        </form>
      </div>`
    : ''
  const home = viewer ? href('namespaces', viewer.ns) : '/'
  return html`<header class="topbar">
    <a class="brand" href="${home}"><span class="logo" aria-hidden="true">◆</span> Package Firewall</a>
    ${who}
  </header>`
}

/** The whole HTML document around a page body. */
export function layout(options: PageOptions): Html {
  const crumbs = options.crumbs?.length
    ? html`<nav class="crumbs" aria-label="Breadcrumb">
        <ol>
          ${options.crumbs.map(([label, url]) => html`<li><a href="${url}">${label}</a></li>`)}
        </ol>
      </nav>`
    : ''
  const flash = options.flash
    ? html`<div class="flash ${options.flash.kind}" role="status">${options.flash.text}</div>`
    : ''
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${options.title} · Package Firewall</title>
        <link rel="stylesheet" href="/assets/dashboard.css" />
        <script src="/assets/dashboard.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        ${header(options.viewer)} ${options.viewer ? navigation(options.viewer, options.section) : ''}
        <main id="main" tabindex="-1">${crumbs} ${flash} ${options.body}</main>
      </body>
    </html>`
}
