import { getFirewall } from '../../firewall/queries'
import { FIREWALL_PERMISSIONS, type Firewall } from '../../firewall/schema'
import { card, heading } from '../components'
import { firewallCrumbs, formVersion, fwPath, replaceConfig, versionField } from '../firewall-edit'
import { errorSummary, fieldId, NO_ERRORS, orInPlace, selectField, type FormErrors } from '../forms'
import { knownPrincipals } from '../../namespace/users'
import type { ActionResult, DashboardRequest } from '../handler'
import { html, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/**
 * `.../permissions`: who holds which permission on the firewall, as a grid of checkboxes. Saved
 * with the API's `PUT` (`putFirewall`): granting a string needs `fw:update:config` and holding
 * that string yourself; the refusal names it on the form.
 */

/** Principal key -> permission strings, in the order the form lists them. */
type Grants = [principal: string, permissions: string[]][]

const MAX_ROWS = 500

/**
 * The principals the "add" row offers, picked rather than typed: `everybody`, the namespace's
 * teams and known users, less those that already have a row (a posted value stays selectable).
 */
function principalChoices(
  known: Awaited<ReturnType<typeof knownPrincipals>>,
  grants: Grants,
  added: string,
): [string, string][] {
  const listed = new Set(grants.map(([principal]) => principal))
  const all: [string, string][] = [
    ['', 'Choose a user or team…'],
    ['everybody', 'everybody (every principal of the namespace)'],
    ...known.teams.map((team): [string, string] => [team.id, `team ${team.name} (${team.id})`]),
    ...known.users.map((user): [string, string] => [user, `user ${user}`]),
  ]
  const choices = all.filter(([value]) => !value || !listed.has(value) || value === added)
  if (added && !choices.some(([value]) => value === added)) choices.push([added, added])
  return choices
}

function grantsFrom(form: Form): Grants {
  const grants: Grants = []
  for (let i = 0; i < MAX_ROWS && form.get(`p.${i}.principal`) !== undefined; i++) {
    grants.push([form.get(`p.${i}.principal`) ?? '', form.all(`p.${i}.perm`)])
  }
  const added = form.text('new.principal')
  if (added) grants.push([added, form.all('new.perm')])
  return grants
}

async function renderForm(
  req: DashboardRequest,
  fw: Firewall,
  grants: Grants,
  version: number,
  errors: FormErrors,
  added: [string, string[]] = ['', []],
): Promise<Html> {
  const { ns } = req.viewer
  const known = await knownPrincipals(req.services, ns)
  const short = (p: string) => p.replace(/^fw:/, '')
  const head = html`<thead>
    <tr>
      <th scope="col">Principal</th>
      ${FIREWALL_PERMISSIONS.map((p) => html`<th scope="col"><code>${short(p)}</code></th>`)}
    </tr>
  </thead>`
  const rows = grants.map(
    ([principal, held], i) =>
      html`<tr data-principal="${principal}">
        <th scope="row">
          <code>${principal}</code
          ><input
            type="hidden"
            name="p.${i}.principal"
            value="${principal}"
          />${errors.of(`p.${i}`).length ? html`<p class="field-error" id="${fieldId(`p.${i}`)}-err">${errors.of(`p.${i}`).join('; ')}</p>` : ''}
        </th>
        ${FIREWALL_PERMISSIONS.map((p) => html`<td><input type="checkbox" name="p.${i}.perm" value="${p}" aria-label="${principal}: ${p}" ${held.includes(p) ? ' checked' : ''} /></td>`)}
      </tr>`,
  )
  const form = html`<form method="post" action="${fwPath(ns, fw.id, 'permissions')}" class="stack" novalidate>
    ${csrfField(req.viewer)}${versionField(version)} ${errorSummary(errors)}
    <p class="small muted">
      Keys are user ids, team ids, service principal ids, or <code>everybody</code> (every principal of the namespace).
      Untick every box of a row to remove it. You can grant only what you hold yourself.
    </p>
    <div class="table-wrap" tabindex="0" role="region" aria-label="Permissions">
      <table class="perm-grid">
        ${head}
        <tbody>
          ${rows}
        </tbody>
      </table>
    </div>
    <fieldset class="form-section">
      <legend>Add a principal</legend>
      ${selectField(errors, { label: 'Principal', name: 'new.principal', value: added[0], choices: principalChoices(known, grants, added[0]) })}
      <div class="actions">
        ${FIREWALL_PERMISSIONS.map((p) => html`<label class="check"><input type="checkbox" name="new.perm" value="${p}" ${added[1].includes(p) ? ' checked' : ''} /> <code>${p}</code></label>`)}
      </div>
    </fieldset>
    <div class="actions">
      <button class="button primary" type="submit">Save permissions</button>
      <a class="button" href="${fwPath(ns, fw.id)}#permissions">Cancel</a>
    </div>
  </form>`
  const body = html`${heading(html`Permissions on ${fw.name}`, '', html`<code>${fw.id}</code>, version ${fw.version}`)}${card('Permissions', form, 'permissions')}`
  return layout({
    title: `Permissions on ${fw.name}`,
    section: 'firewalls',
    viewer: req.viewer,
    flash: req.flash,
    crumbs: firewallCrumbs(ns, fw),
    body,
  })
}

export async function permissionsPage(req: DashboardRequest): Promise<Html> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  return await renderForm(req, fw, Object.entries(fw.permissions), fw.version, NO_ERRORS)
}

export async function savePermissionsAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const fw = await getFirewall(req.ctx, req.params.fw)
  const grants = grantsFrom(form)
  const version = formVersion(form)
  // A principal added again merges into its row; a row with nothing ticked is dropped. A Map: keys are ids.
  const merged = new Map<string, Set<string>>()
  for (const [principal, held] of grants) merged.set(principal, new Set([...(merged.get(principal) ?? []), ...held]))
  const kept = [...merged]
    .filter(([, held]) => held.size > 0)
    .map(([principal, held]) => [principal, [...held]] as const)
  // Error paths name the principal key (`permissions.alice`); the form shows them on its row.
  const fieldOf = (path: string) => {
    const key = /^permissions\.(.+)$/.exec(path)?.[1]
    const row = grants.findIndex(([principal]) => principal === key)
    return row < 0 ? undefined : row === grants.length - 1 && form.text('new.principal') ? 'new.principal' : `p.${row}`
  }
  return orInPlace(
    async () => {
      const saved = await replaceConfig(req, fw.id, version, (input) => ({
        ...input,
        permissions: Object.fromEntries(kept),
      }))
      return {
        redirect: `${fwPath(req.viewer.ns, fw.id)}#permissions`,
        flash: `Permissions saved: the firewall is now at version ${saved.version}.`,
      }
    },
    fieldOf,
    async (errors, stale) => {
      const current = await getFirewall(req.ctx, fw.id)
      const added = form.text('new.principal')
      // The added row stays in the "add" fields so that it can be corrected.
      return renderForm(
        req,
        current,
        added ? grants.slice(0, -1) : grants,
        stale ? current.version : (version ?? current.version),
        errors,
        added ? [added, form.all('new.perm')] : undefined,
      )
    },
  )
}
