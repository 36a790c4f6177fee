import { requireNamespacePermission } from '../../auth/permissions'
import { createNewFirewall } from '../../firewall/commands'
import { ECOSYSTEMS, FirewallInput } from '../../firewall/schema'
import { ClientId } from '../../common/ids'
import { card, heading } from '../components'
import { fwPath } from '../firewall-edit'
import { errorSummary, inputField, NO_ERRORS, orInPlace, selectField, textareaField, type FormErrors } from '../forms'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/**
 * `/namespaces/{ns}/firewalls/new`: a new firewall with its first upstream; rules, exceptions
 * and permissions are added on its page. Creating needs `ns:firewalls:create` and never
 * replaces an existing firewall (`createNewFirewall`: 409 when the id is taken).
 */

interface NewValues {
  id: string
  name: string
  ecosystem: string
  description: string
  upstreamId: string
  endpoint: string
}

const DEFAULT_ENDPOINTS: Record<(typeof ECOSYSTEMS)[number], string> = {
  npm: 'https://registry.npmjs.org',
  pypi: 'https://pypi.org/simple/',
  maven: 'https://repo1.maven.org/maven2/',
  nuget: 'https://api.nuget.org/v3/index.json',
}

function render(req: DashboardRequest, values: NewValues, errors: FormErrors): Html {
  const { ns } = req.viewer
  const form = html`<form method="post" action="${href('namespaces', ns, 'firewalls')}" class="stack" novalidate>
    ${csrfField(req.viewer)}${errorSummary(errors)}
    <div class="grid form-grid">
      ${inputField(errors, { label: 'Firewall id', name: 'id', value: values.id, required: true, placeholder: 'web', hint: 'Part of the client URL /registry/{namespace}/{id}/; cannot change later.' })}
      ${inputField(errors, { label: 'Display name', name: 'name', value: values.name })}
      ${selectField(errors, { label: 'Ecosystem', name: 'ecosystem', value: values.ecosystem, choices: ECOSYSTEMS.map((e) => [e, e]), hint: 'One ecosystem per firewall; cannot change later.' })}
      ${textareaField(errors, { label: 'Description', name: 'description', value: values.description, rows: 2 })}
    </div>
    <fieldset class="form-section">
      <legend>First upstream (optional)</legend>
      <div class="grid form-grid">
        ${inputField(errors, { label: 'Upstream id', name: 'upstreamId', value: values.upstreamId, placeholder: 'public' })}
        ${inputField(errors, { label: 'Upstream endpoint', name: 'endpoint', type: 'url', value: values.endpoint, hint: html`e.g. ${Object.entries(DEFAULT_ENDPOINTS).map(([eco, url], i) => html`${i ? ', ' : ''}${eco}: <code>${url}</code>`)}` })}
      </div>
      <p class="small muted">Credentials, more upstreams, rules and permissions are added on the firewall’s page.</p>
    </fieldset>
    <div class="actions">
      <button class="button primary" type="submit">Create firewall</button>
      <a class="button" href="${href('namespaces', ns, 'firewalls')}">Cancel</a>
    </div>
  </form>`
  const body = html`${heading('New firewall')}${card('Firewall', form, 'new-firewall')}`
  return layout({
    title: 'New firewall',
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: [['Firewalls', href('namespaces', ns, 'firewalls')]],
    body,
  })
}

export async function newFirewallPage(req: DashboardRequest): Promise<Html> {
  requireNamespacePermission(req.ctx.principal, 'ns:firewalls:create')
  return render(req, { id: '', name: '', ecosystem: 'npm', description: '', upstreamId: '', endpoint: '' }, NO_ERRORS)
}

const FIELDS: Record<string, string> = {
  id: 'id',
  name: 'name',
  ecosystem: 'ecosystem',
  description: 'description',
  'upstreams[0].id': 'upstreamId',
  'upstreams[0].endpoint': 'endpoint',
  upstreams: 'upstreamId',
}

export async function createFirewallAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const values: NewValues = {
    id: form.text('id') ?? '',
    name: form.text('name') ?? '',
    ecosystem: form.get('ecosystem') ?? 'npm',
    description: form.get('description') ?? '',
    upstreamId: form.text('upstreamId') ?? '',
    endpoint: form.text('endpoint') ?? '',
  }
  return orInPlace(
    async () => {
      requireNamespacePermission(req.ctx.principal, 'ns:firewalls:create')
      const id = ClientId.parse(values.id)
      const upstreams =
        values.endpoint || values.upstreamId ? [{ id: values.upstreamId || 'upstream', endpoint: values.endpoint }] : []
      const input = FirewallInput.parse({
        ecosystem: values.ecosystem,
        ...(values.name ? { name: values.name } : {}),
        description: values.description,
        upstreams,
      })
      const { firewall } = await createNewFirewall(req.ctx, id, input)
      return {
        redirect: fwPath(req.viewer.ns, firewall.id),
        flash: `Firewall ${firewall.id} created. Add rules and permissions below.`,
      }
    },
    (path) => (path === '(root)' ? 'id' : Object.hasOwn(FIELDS, path) ? FIELDS[path] : undefined),
    async (errors) => render(req, values, errors),
  )
}
