import { z } from 'zod'
import { canOnFirewall } from '../../auth/permissions'
import { ClientId } from '../../common/ids'
import { cloneFirewall, deleteFirewall } from '../../firewall/commands'
import { getFirewall } from '../../firewall/queries'
import type { Firewall } from '../../firewall/schema'
import { firewall as firewallAccess } from '../../http/access'
import { card, heading } from '../components'
import {
  expectedVersion,
  firewallCrumbs,
  formVersion,
  fwPath,
  idList,
  replaceConfig,
  versionField,
} from '../firewall-edit'
import { errorSummary, inputField, NO_ERRORS, orInPlace, textareaField, type FormErrors } from '../forms'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/**
 * `.../settings`: name, description and base firewalls (saved with `putFirewall`), clone
 * (`cloneFirewall`, the API's `POST .../clone`) and delete (`deleteFirewall`, with If-Match).
 */

interface SettingsValues {
  name: string
  description: string
  extends: string
}

interface Forms {
  settings?: { values: SettingsValues; errors: FormErrors; version: number }
  clone?: { id: string; name: string; errors: FormErrors }
  remove?: FormErrors
}

function render(req: DashboardRequest, fw: Firewall, forms: Forms = {}): Html {
  const { ns, principal } = req.viewer
  const settings = forms.settings ?? {
    values: { name: fw.name, description: fw.description, extends: fw.extends.join(', ') },
    errors: NO_ERRORS,
    version: fw.version,
  }
  const errors = settings.errors
  const settingsForm = html`<form method="post" action="${fwPath(ns, fw.id, 'settings')}" class="stack" novalidate>
    ${csrfField(req.viewer)}${versionField(settings.version)} ${errorSummary(errors)}
    ${inputField(errors, { label: 'Display name', name: 'name', value: settings.values.name })}
    ${textareaField(errors, { label: 'Description', name: 'description', value: settings.values.description, rows: 3 })}
    ${inputField(errors, { label: 'Extends', name: 'extends', value: settings.values.extends, hint: 'Ids of base firewalls of the same ecosystem, comma-separated: their rules and exceptions apply here too.' })}
    <div class="actions"><button class="button primary" type="submit">Save settings</button></div>
  </form>`
  const clone = forms.clone ?? { id: '', name: '', errors: NO_ERRORS }
  const cloneForm = canOnFirewall(principal, fw, 'fw:clone')
    ? card(
        'Clone',
        html`<form method="post" action="${fwPath(ns, fw.id, 'clone')}" class="stack" novalidate>
          ${csrfField(req.viewer)}${errorSummary(clone.errors)}
          <p class="small muted">
            A new firewall (version 1) with this configuration, its permissions and credentials included.
          </p>
          <div class="grid form-grid">
            ${inputField(clone.errors, { label: 'New firewall id', name: 'id', value: clone.id, required: true })}
            ${inputField(clone.errors, { label: 'New display name', name: 'name', value: clone.name, placeholder: `${fw.name} (copy)` })}
          </div>
          <div class="actions"><button class="button" type="submit">Clone firewall</button></div>
        </form>`,
        'clone',
      )
    : ''
  const removeErrors = forms.remove ?? NO_ERRORS
  const removeForm = canOnFirewall(principal, fw, 'fw:delete')
    ? html`<section class="card danger-zone" id="delete" aria-labelledby="delete-h">
        <h2 id="delete-h">Delete</h2>
        <form
          method="post"
          action="${fwPath(ns, fw.id, 'delete')}"
          class="stack"
          data-confirm="Delete firewall ${fw.id}? Clients using it stop working."
        >
          ${csrfField(req.viewer)}${versionField(fw.version)}${errorSummary(removeErrors)}
          <p class="small muted">
            Its history stays readable in the audit log and events; a firewall created later under the same id starts a
            new history.
          </p>
          <div class="actions"><button class="button danger" type="submit">Delete firewall</button></div>
        </form>
      </section>`
    : ''
  const body = html`${heading(html`Settings of ${fw.name}`, '', html`<code>${fw.id}</code> · <span class="badge">${fw.ecosystem}</span> · version ${fw.version}`)}
  ${card('Settings', settingsForm, 'settings')}${cloneForm}${removeForm}`
  return layout({
    title: `Settings of ${fw.name}`,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: firewallCrumbs(ns, fw),
    body,
  })
}

export async function settingsPage(req: DashboardRequest): Promise<Html> {
  return render(req, await getFirewall(req.ctx, req.params.fw))
}

export async function saveSettingsAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const values: SettingsValues = {
    name: form.get('name') ?? '',
    description: form.get('description') ?? '',
    extends: form.get('extends') ?? '',
  }
  const version = formVersion(form)
  const fieldOf = (path: string) => /^(name|description|extends)\b/.exec(path)?.[1]
  return orInPlace(
    async () => {
      const saved = await replaceConfig(req, req.params.fw, version, (input) => ({
        ...input,
        name: values.name.trim() || undefined,
        description: values.description,
        extends: idList(values.extends),
      }))
      return {
        redirect: fwPath(req.viewer.ns, saved.id),
        flash: `Settings saved: the firewall is now at version ${saved.version}.`,
      }
    },
    fieldOf,
    async (errors, stale) => {
      const current = await getFirewall(req.ctx, req.params.fw)
      return render(req, current, {
        settings: { values, errors, version: stale ? current.version : (version ?? current.version) },
      })
    },
  )
}

/** The API's clone body (`POST .../clone`). */
const CloneBody = z.object({ id: ClientId, name: z.string().min(1).max(200).optional() })

export async function cloneAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const id = form.text('id') ?? ''
  const name = form.text('name')
  return orInPlace(
    async () => {
      await firewallAccess('fw:clone')(req.ctx, req.params)
      const body = CloneBody.parse({ id, name })
      const { firewall } = await cloneFirewall(req.ctx, req.params.fw, body.id, body.name)
      return { redirect: fwPath(req.viewer.ns, firewall.id), flash: `Cloned into ${firewall.id}.` }
    },
    (path) => (path === 'id' || path === 'name' ? path : undefined),
    async (errors) =>
      render(req, await getFirewall(req.ctx, req.params.fw), { clone: { id, name: name ?? '', errors } }),
  )
}

export async function deleteFirewallAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  return orInPlace(
    async () => {
      await firewallAccess('fw:delete')(req.ctx, req.params)
      await deleteFirewall(req.ctx, req.params.fw, expectedVersion(form))
      return { redirect: href('namespaces', req.viewer.ns, 'firewalls'), flash: `Firewall ${req.params.fw} deleted.` }
    },
    () => undefined,
    async (errors) => render(req, await getFirewall(req.ctx, req.params.fw), { remove: errors }),
  )
}
