import { hasNamespacePermission } from '../../auth/permissions'
import { PersonalTokenInput, ServiceTokenInput } from '../../namespace/schema'
import {
  createPersonalToken,
  createServiceToken,
  listPersonalTokens,
  listServiceTokens,
  revokeToken,
} from '../../namespace/tokens'
import { card, heading, postButton, table } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'
import { errorSummary, orInPlace, type FormErrors } from '../forms'
import { invalid } from '../../common/errors'
import { permissionPicker } from './teams'
import { getRequestURL } from 'h3'
import { accessibleFirewalls } from '../../firewall/queries'
import { clientSnippets, firewallClientUrl, TOKEN_PLACEHOLDER } from '../client-snippets'

/** `/namespaces/{ns}/tokens`: the viewer's personal tokens and, for managers, service tokens. */

type Created = { kind: string; name: string; token: string }

function tokenRows(
  req: DashboardRequest,
  tokens: {
    id: string
    name: string
    prefix: string
    createdAt: string
    expiresAt: string | null
    lastUsedAt: string | null
    permissions?: string[]
  }[],
) {
  const base = href('namespaces', req.viewer.ns, 'tokens')
  return tokens.map((t) => [
    html`<strong>${t.name}</strong>
      <div class="small muted"><code>${t.id}</code></div>`,
    html`<code>${t.prefix}…</code>`,
    ...(t.permissions ? [html`<span class="small">${t.permissions.join(', ') || '—'}</span>`] : []),
    time(t.createdAt),
    time(t.lastUsedAt),
    t.expiresAt ? time(t.expiresAt) : html`<span class="muted">never</span>`,
    t.id === req.ctx.principal.tokenId
      ? html`<span class="pill info">this session</span>`
      : postButton(req.viewer, `${base}/${encodeURIComponent(t.id)}/revoke`, 'Revoke', {
          kind: 'danger',
          confirm: `Revoke token ${t.name}? Clients using it stop working at once.`,
        }),
  ])
}

/**
 * A date input (optional) as an end-of-day UTC timestamp. Anything but a real `YYYY-MM-DD` date
 * (`-1`, `2026-02-31`, what a hand-made post sends) is a 400 on the field, never an exception.
 */
function expiry(value: string | undefined): string | undefined {
  if (!value) return undefined
  const time = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T23:59:59Z`) : Number.NaN
  // Date.parse rolls 2026-02-31 over to March: only a date that reads back the same is one.
  if (Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== value) {
    const message = 'an expiry date is a calendar date, YYYY-MM-DD'
    throw invalid('invalid_expiry', `expiresAt: ${message}`, [{ path: 'expiresAt', message }])
  }
  return new Date(time).toISOString()
}

/** Errors of a refused create form, shown on the form that was sent. */
type Refused = { kind: 'personal' | 'service'; errors: FormErrors }

export async function tokensPage(req: DashboardRequest, created?: Created, refused?: Refused): Promise<Html> {
  const { ns, principal } = req.viewer
  const base = href('namespaces', ns, 'tokens')
  const manage = hasNamespacePermission(principal, 'ns:tokens:manage')
  const [personal, service] = await Promise.all([
    principal.type === 'user' ? listPersonalTokens(req.ctx) : [],
    manage ? listServiceTokens(req.ctx) : [],
  ])
  const shown = created
    ? html`<div class="secret" role="status">
          <p><strong>Copy your new ${created.kind} token “${created.name}” now.</strong> It is shown only this once.</p>
          <code class="break" data-testid="new-token">${created.token}</code>
          <button class="button small" type="button" data-copy="${created.token}">Copy</button>
        </div>
        ${created.kind === 'personal' ? await snippetsForToken(req, created.token) : ''}`
    : ''
  const expiryField = html`<label>Expires on (optional) <input type="date" name="expiresAt" /></label>`
  const errorsOf = (kind: Refused['kind']) => (refused?.kind === kind ? errorSummary(refused.errors) : '')
  const personalCard =
    principal.type === 'user'
      ? card(
          'Personal tokens',
          html`${table('Personal tokens', ['Token', 'Prefix', 'Created', 'Last used', 'Expires', ''], tokenRows(req, personal), 'No personal tokens.')}
            <form method="post" action="${base}/personal" class="inline-form">
              ${errorsOf('personal')}${csrfField(req.viewer)}
              <label>Name <input name="name" required maxlength="200" /></label>${expiryField}
              <button class="button primary" type="submit">Create personal token</button>
            </form>`,
          'personal',
        )
      : ''
  const serviceCard = manage
    ? card(
        'Service tokens',
        html`${table('Service tokens', ['Token', 'Prefix', 'Permissions', 'Created', 'Last used', 'Expires', ''], tokenRows(req, service), 'No service tokens.')}
          <form method="post" action="${base}/service" class="stack">
            ${errorsOf('service')}${csrfField(req.viewer)}
            <label>Name <input name="name" required maxlength="200" /></label>${expiryField}
            ${permissionPicker('Permissions of the service principal')}
            <div class="actions"><button class="button primary" type="submit">Create service token</button></div>
          </form>`,
        'service',
      )
    : ''
  const body = html`${heading('Access tokens', '', 'Tokens are stored only as hashes; the material is shown once, on creation.')}
  ${shown}${personalCard}${serviceCard}`
  return layout({ title: 'Tokens', section: 'tokens', viewer: req.viewer, flash: req.flash, body })
}

/**
 * Next to a new personal token: the client configuration of every firewall the viewer may use,
 * with the line that puts the token in the variable the snippets read.
 */
async function snippetsForToken(req: DashboardRequest, token: string): Promise<Html> {
  const firewalls = await accessibleFirewalls(req.ctx)
  if (firewalls.length === 0)
    return html`<p class="muted small">No firewall grants you <code>fw:access</code> yet: ask its owner for access.</p>`
  const origin = req.services.config.publicBaseUrl ?? getRequestURL(req.event).origin
  return card(
    'Use it with your firewalls',
    html`<p class="small muted">Put the token in the variable the snippets read (shown once, like the token):</p>
      <pre class="code" data-testid="token-export">export ${TOKEN_PLACEHOLDER}=${token}</pre>
      ${firewalls.map(
        (fw) =>
          html`<section data-testid="token-firewall" data-firewall="${fw.id}">
            <h3>${fw.name} <span class="muted small">· ${fw.id} · ${fw.ecosystem}</span></h3>
            ${clientSnippets(fw.ecosystem, firewallClientUrl(origin, req.viewer.ns, fw.id)).map(
              (snippet) =>
                html`<h4 class="small">${snippet.client} <span class="muted">· ${snippet.where}</span></h4>
                  <pre class="code" data-testid="client-snippet">${snippet.text}</pre>`,
            )}
          </section>`,
      )}`,
    'token-snippets',
  )
}

/** Field errors of the token forms all go to the summary above the form (its fields are few). */
const noField = () => undefined

export async function createPersonalAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  return orInPlace(
    async () => {
      const created = await createPersonalToken(
        req.ctx,
        PersonalTokenInput.parse({ name: form.text('name') ?? '', expiresAt: expiry(form.text('expiresAt')) }),
      )
      return {
        page: await tokensPage(req, { kind: 'personal', name: created.name, token: created.token }),
        status: 201,
      }
    },
    noField,
    (errors) => tokensPage(req, undefined, { kind: 'personal', errors }),
  )
}

export async function createServiceAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  return orInPlace(
    async () => {
      const created = await createServiceToken(
        req.ctx,
        ServiceTokenInput.parse({
          name: form.text('name') ?? '',
          permissions: form.all('permissions'),
          expiresAt: expiry(form.text('expiresAt')),
        }),
      )
      return {
        page: await tokensPage(req, { kind: 'service', name: created.name, token: created.token }),
        status: 201,
      }
    },
    noField,
    (errors) => tokensPage(req, undefined, { kind: 'service', errors }),
  )
}

export async function revokeAction(req: DashboardRequest): Promise<ActionResult> {
  await revokeToken(req.ctx, req.params.token)
  return { redirect: href('namespaces', req.viewer.ns, 'tokens'), flash: 'Token revoked.' }
}
