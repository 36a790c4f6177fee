import { invalid, notFound } from '../../common/errors'
import { getFirewall } from '../../firewall/queries'
import type { Firewall, FirewallInput, Upstream } from '../../firewall/schema'
import { card, heading, postButton } from '../components'
import { firewallCrumbs, formVersion, fwPath, itemField, replaceConfig, versionField } from '../firewall-edit'
import { checkField, errorSummary, fieldId, inputField, NO_ERRORS, orInPlace, type FormErrors } from '../forms'
import type { ActionResult, DashboardRequest } from '../handler'
import { html, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/**
 * Add, edit or remove one upstream: `.../upstreams/new`, `.../upstreams/{id}/edit`. Saving is a
 * `PUT` of the whole configuration (`putFirewall`). Credentials are never shown: the form offers
 * to keep what is stored (the `[REDACTED]` placeholder, which keeps the stored secret only at
 * the same endpoint, docs/security.md), to remove it, or to give new ones.
 */

type CredentialChoice = 'keep' | 'none' | 'basic' | 'token'

interface UpstreamValues {
  mode: 'new' | 'edit'
  id: string
  endpoint: string
  internal: boolean
  cached: boolean
  credentials: CredentialChoice
  username: string
  password: string
  token: string
}

const valuesOf = (u: Upstream): UpstreamValues => ({
  mode: 'edit',
  id: u.id,
  endpoint: u.endpoint,
  internal: u.internal,
  cached: u.cached,
  credentials: u.credentials ? 'keep' : 'none',
  username: '',
  password: '',
  token: '',
})

const CHOICES: CredentialChoice[] = ['keep', 'none', 'basic', 'token']

const valuesFrom = (form: Form): UpstreamValues => ({
  mode: form.get('mode') === 'edit' ? 'edit' : 'new',
  id: form.text('id') ?? '',
  endpoint: form.text('endpoint') ?? '',
  internal: form.get('internal') === 'true',
  cached: form.get('cached') === 'true',
  credentials: CHOICES.find((c) => c === form.get('credentials')) ?? 'none',
  username: form.get('username') ?? '',
  // Secrets typed into a refused form are not sent back to the browser.
  password: '',
  token: '',
})

const ENDPOINT_HINTS: Record<Firewall['ecosystem'], string> = {
  npm: 'The registry URL, e.g. https://registry.npmjs.org',
  pypi: 'The index root or its simple index, e.g. https://pypi.org/simple/',
  maven: 'The repository root, e.g. https://repo1.maven.org/maven2/',
  nuget: 'The service index, e.g. https://api.nuget.org/v3/index.json',
}

function credentialKind(u: Upstream | undefined): string {
  if (!u?.credentials) return 'none stored'
  return 'token' in u.credentials ? 'a token is stored' : 'a user name and password are stored'
}

async function renderForm(
  req: DashboardRequest,
  fw: Firewall,
  values: UpstreamValues,
  version: number,
  errors: FormErrors,
): Promise<Html> {
  const { ns } = req.viewer
  const stored = fw.upstreams.find((u) => u.id === values.id)
  const radio = (value: CredentialChoice, label: string) =>
    html`<label class="choice"
      ><input type="radio" name="credentials" value="${value}" ${values.credentials === value ? ' checked' : ''} />
      ${label}</label
    >`
  const credentialErrors = errors.of('credentials')
  const form = html`<form
    method="post"
    action="${fwPath(ns, fw.id, 'upstreams')}"
    class="stack"
    novalidate
    autocomplete="off"
  >
    ${csrfField(req.viewer)}${versionField(version)}<input type="hidden" name="mode" value="${values.mode}" />
    ${errorSummary(errors)}
    <div class="grid form-grid">
      ${
        values.mode === 'new'
          ? inputField(errors, {
              label: 'Upstream id',
              name: 'id',
              value: values.id,
              required: true,
              placeholder: 'npmjs',
            })
          : html`<div class="field">
              <span class="muted small">Upstream id</span><code>${values.id}</code
              ><input type="hidden" name="id" value="${values.id}" />
            </div>`
      }
      ${inputField(errors, { label: 'Endpoint', name: 'endpoint', type: 'url', value: values.endpoint, required: true, hint: ENDPOINT_HINTS[fw.ecosystem] })}
      ${checkField(errors, { label: html`Internal <span class="small muted">(a package found here is never looked up in a public upstream)</span>`, name: 'internal', checked: values.internal })}
      ${checkField(errors, { label: 'Cache tarballs and metadata', name: 'cached', checked: values.cached })}
    </div>
    <fieldset class="form-section${credentialErrors.length ? ' has-error' : ''}" id="${fieldId('credentials')}">
      <legend>Credentials</legend>
      <p class="small muted">
        Stored credentials are never shown. Now: ${values.mode === 'edit' ? credentialKind(stored) : 'none'}. Changing
        them needs <code>fw:update:credentials</code>; so does moving stored ones to a new endpoint.
      </p>
      <div class="actions">
        ${stored?.credentials ? radio('keep', 'Keep the stored credentials') : ''}${radio('none', 'None')}${radio('basic', 'A user name and password')}${radio('token', 'A token')}
      </div>
      <div class="grid form-grid">
        ${inputField(errors, { label: 'User name', name: 'username', value: values.username, attrs: html` autocomplete="off"` })}
        ${inputField(errors, { label: 'Password', name: 'password', type: 'password', attrs: html` autocomplete="new-password"` })}
        ${inputField(errors, { label: 'Token', name: 'token', type: 'password', attrs: html` autocomplete="new-password"` })}
      </div>
      ${credentialErrors.length ? html`<p class="field-error">${credentialErrors.join('; ')}</p>` : ''}
    </fieldset>
    <div class="actions">
      <button class="button primary" type="submit">Save upstream</button>
      <a class="button" href="${fwPath(ns, fw.id)}#upstreams">Cancel</a>
    </div>
  </form>`
  const remove =
    values.mode === 'edit' && stored
      ? card(
          'Remove',
          postButton(req.viewer, fwPath(ns, fw.id, 'upstreams', values.id, 'delete'), 'Remove upstream', {
            kind: 'danger',
            confirm: `Remove upstream ${values.id}?`,
            fields: { version: String(fw.version) },
          }),
          'remove',
        )
      : ''
  const title = values.mode === 'new' ? 'Add an upstream' : html`Edit upstream <code>${values.id}</code>`
  const body = html`${heading(title, '', html`on firewall <strong>${fw.name}</strong> (<span class="badge">${fw.ecosystem}</span>), version ${fw.version}`)}${card('Upstream', form, 'upstream')}${remove}`
  return layout({
    title: values.mode === 'new' ? 'Add an upstream' : `Edit upstream ${values.id}`,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: firewallCrumbs(ns, fw),
    body,
  })
}

export async function newUpstreamPage(req: DashboardRequest): Promise<Html> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  return renderForm(
    req,
    fw,
    {
      mode: 'new',
      id: '',
      endpoint: '',
      internal: false,
      cached: false,
      credentials: 'none',
      username: '',
      password: '',
      token: '',
    },
    fw.version,
    NO_ERRORS,
  )
}

export async function editUpstreamPage(req: DashboardRequest): Promise<Html> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const upstream = fw.upstreams.find((u) => u.id === req.params.upstreamId)
  if (!upstream) throw notFound('upstream', req.params.upstreamId)
  return renderForm(req, fw, valuesOf(upstream), fw.version, NO_ERRORS)
}

/** The upstream the form stands for; `current` is the redacted stored one (its placeholders keep the secrets). */
function upstreamOf(form: Form, values: UpstreamValues, current: Upstream | undefined): Record<string, unknown> {
  const credentials =
    values.credentials === 'keep'
      ? current?.credentials
      : values.credentials === 'basic'
        ? { username: form.get('username') ?? '', password: form.get('password') ?? '' }
        : values.credentials === 'token'
          ? { token: form.get('token') ?? '' }
          : undefined
  return {
    id: values.id,
    endpoint: values.endpoint,
    internal: values.internal,
    cached: values.cached,
    ...(credentials ? { credentials } : {}),
    ...(current?.artifactCredentials ? { artifactCredentials: current.artifactCredentials } : {}),
  }
}

export async function saveUpstreamAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const values = valuesFrom(form)
  const version = formVersion(form)
  let index = fw.upstreams.findIndex((u) => u.id === values.id)
  const fieldOf = (path: string) => {
    if (path === 'upstreams') return 'id'
    const field = itemField(path, 'upstreams', index)
    if (field === undefined) return undefined
    return /^(credentials|artifactCredentials)/.test(field) ? 'credentials' : field.split(/[.[]/)[0]
  }
  return orInPlace(
    async () => {
      await replaceConfig(req, fw.id, version, (input: FirewallInput, current) => {
        const existing = current.upstreams.findIndex((u) => u.id === values.id)
        if (values.mode === 'new' && existing >= 0) {
          throw invalid('upstream_exists', `upstream "${values.id}" already exists`, [
            { path: 'id', message: 'an upstream with this id already exists; edit it instead' },
          ])
        }
        const upstream = upstreamOf(form, values, current.upstreams[existing])
        index = existing >= 0 ? existing : input.upstreams.length
        const upstreams: unknown[] = [...input.upstreams]
        upstreams[index] = upstream
        return { ...input, upstreams }
      })
      return { redirect: `${fwPath(req.viewer.ns, fw.id)}#upstreams`, flash: `Upstream ${values.id} saved.` }
    },
    (path) => (path === 'id' ? 'id' : fieldOf(path)),
    async (errors, stale) => {
      const current = await getFirewall(req.ctx, fw.id)
      return renderForm(req, current, values, stale ? current.version : (version ?? current.version), errors)
    },
  )
}

export async function deleteUpstreamAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const id = req.params.upstreamId
  await replaceConfig(req, req.params.fw, formVersion(form), (input) => {
    if (!input.upstreams.some((u) => u.id === id)) throw notFound('upstream', id)
    return { ...input, upstreams: input.upstreams.filter((u) => u.id !== id) }
  })
  return { redirect: `${fwPath(req.viewer.ns, req.params.fw)}#upstreams`, flash: `Upstream ${id} removed.` }
}
