import { hasNamespacePermission } from '../../auth/permissions'
import { LicenseSetInput } from '../../namespace/schema'
import { createLicenseSet, deleteLicenseSet, listLicenseSets, updateLicenseSet } from '../../namespace/license-sets'
import { card, heading, postButton } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'
import { listField } from './webhooks'

/** `/namespaces/{ns}/license-sets`: SPDX license lists that license rules name by id. */

export async function licenseSetsPage(req: DashboardRequest) {
  const { ns, principal } = req.viewer
  const sets = await listLicenseSets(req.ctx)
  const manage = hasNamespacePermission(principal, 'ns:license-sets:manage')
  const base = href('namespaces', ns, 'license-sets')
  const cards = sets.map((set) =>
    card(
      set.name,
      html`<p class="small"><code>${set.id}</code> · updated ${time(set.updatedAt)}</p>
        <p class="chips">
          ${set.licenses.length ? set.licenses.map((l) => html`<span class="chip">${l}</span>`) : html`<span class="muted">empty</span>`}
        </p>
        ${
          manage
            ? html`<details>
                  <summary>Edit</summary>
                  <form method="post" action="${base}/${encodeURIComponent(set.id)}" class="stack">
                    ${csrfField(req.viewer)}
                    <label>Name <input name="name" value="${set.name}" required /></label>
                    <label
                      >Licenses (SPDX ids, comma or newline separated)
                      <textarea name="licenses" rows="3" class="mono">${set.licenses.join(', ')}</textarea>
                    </label>
                    <div class="actions"><button class="button primary" type="submit">Save</button></div>
                  </form>
                </details>
                <div class="actions">
                  ${postButton(req.viewer, `${base}/${encodeURIComponent(set.id)}/delete`, 'Delete', { kind: 'danger', confirm: `Delete license set ${set.name}?` })}
                </div>`
            : ''
        }`,
    ),
  )
  const create = manage
    ? card(
        'New license set',
        html`<form method="post" action="${base}" class="stack">
          ${csrfField(req.viewer)}
          <label>Name <input name="name" required maxlength="200" /></label>
          <label
            >Licenses (SPDX ids, comma or newline separated)
            <textarea name="licenses" rows="3" class="mono" placeholder="MIT, Apache-2.0, BSD-3-Clause"></textarea>
          </label>
          <div class="actions"><button class="button primary" type="submit">Create license set</button></div>
        </form>`,
        'create',
      )
    : ''
  const body = html`${heading('License sets', '', 'Used by license rules: {"name": "license", "licenseSet": "ls-…", "mode": "allow" | "deny"}.')}
  ${cards.length ? cards : card('License sets', html`<p class="empty">No license sets yet.</p>`)}${create}`
  return layout({ title: 'License sets', section: 'license-sets', viewer: req.viewer, flash: req.flash, body })
}

const input = (form: Form) =>
  LicenseSetInput.parse({ name: form.text('name') ?? '', licenses: listField(form.get('licenses')) })
const setsUrl = (req: DashboardRequest) => href('namespaces', req.viewer.ns, 'license-sets')

export async function createLicenseSetAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const set = await createLicenseSet(req.ctx, input(form))
  return { redirect: setsUrl(req), flash: `License set ${set.name} created (${set.id}).` }
}

export async function updateLicenseSetAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const set = await updateLicenseSet(req.ctx, req.params.set, input(form))
  return { redirect: setsUrl(req), flash: `License set ${set.name} saved.` }
}

export async function deleteLicenseSetAction(req: DashboardRequest): Promise<ActionResult> {
  await deleteLicenseSet(req.ctx, req.params.set)
  return { redirect: setsUrl(req), flash: 'License set deleted.' }
}
