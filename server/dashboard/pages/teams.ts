import { hasNamespacePermission } from '../../auth/permissions'
import { GrantablePermission, TeamInput } from '../../namespace/schema'
import { addMember, createTeam, deleteTeam, listMembers, listTeams, removeMember } from '../../namespace/teams'
import { knownPrincipals } from '../../namespace/users'
import { card, heading, postButton, table } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { csrfField, layout } from '../layout'
import type { Form } from '../request'

/** `/namespaces/{ns}/teams`: teams with their permissions and members; managers edit them. */

/** Checkboxes for every grantable permission (teams and service tokens). */
export function permissionPicker(legend: string, name = 'permissions'): Html {
  const options = GrantablePermission.options
  return html`<fieldset class="perm-picker">
    <legend>${legend}</legend>
    ${options.map((p) => html`<label class="check"><input type="checkbox" name="${name}" value="${p}" /> <code>${p}</code></label>`)}
  </fieldset>`
}

export async function teamsPage(req: DashboardRequest) {
  const { ns, principal } = req.viewer
  const teams = await listTeams(req.ctx)
  const members = await Promise.all(teams.map((team) => listMembers(req.ctx, team.id)))
  const manage = hasNamespacePermission(principal, 'ns:teams:manage')
  const known = manage ? (await knownPrincipals(req.services, ns)).users : []
  const base = href('namespaces', ns, 'teams')
  const cards = teams.map((team, i) => {
    const rows = members[i].map((m) => [
      html`<code>${m.userId}</code>`,
      time(m.addedAt),
      manage
        ? postButton(
            req.viewer,
            `${base}/${encodeURIComponent(team.id)}/members/${encodeURIComponent(m.userId)}/remove`,
            'Remove',
            { kind: 'subtle', confirm: `Remove ${m.userId} from ${team.name}?` },
          )
        : '',
    ])
    // Members are picked from the known users (sign-ins, the admin CLI, the bootstrap), not typed.
    const candidates = known.filter((user) => !members[i].some((m) => m.userId === user))
    const add =
      manage && candidates.length
        ? html`<form method="post" action="${base}/${encodeURIComponent(team.id)}/members" class="inline-form">
            ${csrfField(req.viewer)}
            <label
              >User
              <select name="userId" required>
                ${candidates.map((user) => html`<option value="${user}">${user}</option>`)}
              </select></label
            >
            <button class="button" type="submit">Add member</button>
          </form>`
        : ''
    return card(
      team.name,
      html`<p class="small">
          <code>${team.id}</code> · permissions:
          ${team.permissions.length ? team.permissions.map((p) => html`<code>${p}</code> `) : html`<span class="muted">none</span>`}
        </p>
        ${table(`Members of ${team.name}`, ['Member', 'Added', ''], rows, 'No members yet.')}
        <div class="actions">
          ${add}${manage ? postButton(req.viewer, `${base}/${encodeURIComponent(team.id)}/delete`, 'Delete team', { kind: 'danger', confirm: `Delete team ${team.name}?` }) : ''}
        </div>`,
    )
  })
  const create = manage
    ? card(
        'New team',
        html`<form method="post" action="${base}" class="stack">
          ${csrfField(req.viewer)}
          <label>Name <input name="name" required maxlength="200" /></label>
          ${permissionPicker('Namespace permissions of its members')}
          <div class="actions"><button class="button primary" type="submit">Create team</button></div>
        </form>`,
        'create',
      )
    : ''
  const body = html`${heading('Teams', '', manage ? 'Teams carry namespace permissions to their members.' : 'You can see the teams; managing them needs ns:teams:manage.')}
  ${cards.length ? cards : card('Teams', html`<p class="empty">No teams yet.</p>`)}${create}`
  return layout({ title: 'Teams', section: 'teams', viewer: req.viewer, flash: req.flash, body })
}

const teamsUrl = (req: DashboardRequest) => href('namespaces', req.viewer.ns, 'teams')

export async function createTeamAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const team = await createTeam(
    req.ctx,
    TeamInput.parse({ name: form.text('name') ?? '', permissions: form.all('permissions') }),
  )
  return { redirect: teamsUrl(req), flash: `Team ${team.name} created.` }
}

export async function deleteTeamAction(req: DashboardRequest): Promise<ActionResult> {
  await deleteTeam(req.ctx, req.params.team)
  return { redirect: teamsUrl(req), flash: 'Team deleted.' }
}

export async function addMemberAction(req: DashboardRequest, form: Form): Promise<ActionResult> {
  const userId = form.text('userId') ?? ''
  await addMember(req.ctx, req.params.team, userId)
  return { redirect: teamsUrl(req), flash: `${userId} added.` }
}

export async function removeMemberAction(req: DashboardRequest): Promise<ActionResult> {
  await removeMember(req.ctx, req.params.team, req.params.userId)
  return { redirect: teamsUrl(req), flash: `${req.params.userId} removed.` }
}
