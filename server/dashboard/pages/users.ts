import { listUsersWithTokens } from '../../namespace/users'
import { revokeToken } from '../../namespace/tokens'
import { card, heading, postButton, table } from '../components'
import type { ActionResult, DashboardRequest } from '../handler'
import { href, html, time, type Html } from '../html'
import { layout } from '../layout'

/**
 * `/namespaces/{ns}/users` (needs `ns:teams:manage`): every known user (provider sign-ins, the
 * admin CLI, the bootstrap) with their teams, personal tokens, last sighting and source. Ids are
 * shown exactly as they are stored.
 */

const SOURCE_LABEL = { oidc: 'identity provider', admin: 'admin CLI', bootstrap: 'bootstrap' } as const

export async function usersPage(req: DashboardRequest): Promise<Html> {
  const { ns } = req.viewer
  const users = await listUsersWithTokens(req.ctx)
  const teamsUrl = href('namespaces', ns, 'teams')
  const rows = users.map((user) => [
    html`<code data-testid="user-id">${user.id}</code>`,
    html`<span class="pill">${SOURCE_LABEL[user.source]}</span>`,
    user.teams.length
      ? user.teams.map((team) => html`<a href="${teamsUrl}#${team}-h"><code>${team}</code></a> `)
      : html`<span class="muted">none</span>`,
    user.lastSeenAt ? time(user.lastSeenAt) : html`<span class="muted">never</span>`,
    user.tokens === null
      ? html`<span class="muted small">needs ns:tokens:manage</span>`
      : user.tokens.length
        ? html`<ul class="plain">
            ${user.tokens.map(
              (token) =>
                html`<li data-token="${token.id}">
                  ${token.name} <code>${token.prefix}…</code>
                  <span class="small muted">last used ${token.lastUsedAt ? time(token.lastUsedAt) : 'never'}</span>
                  ${
                    token.id === req.ctx.principal.tokenId
                      ? html`<span class="pill info">this session</span>`
                      : postButton(
                          req.viewer,
                          `${href('namespaces', ns, 'users', user.id, 'tokens', token.id)}/revoke`,
                          'Revoke',
                          {
                            kind: 'danger',
                            confirm: `Revoke ${user.id}'s token ${token.name}? Its clients stop working at once.`,
                          },
                        )
                  }
                </li>`,
            )}
          </ul>`
        : html`<span class="muted">none</span>`,
  ])
  const body = html`${heading('Users', '', 'Everyone known to this namespace: signed in through the identity provider, added with the admin CLI, or created at bootstrap.')}
  ${card('Users', table('Users', ['User', 'Source', 'Teams', 'Last seen', 'Personal tokens'], rows, 'No users yet.'), 'users')}`
  return layout({ title: 'Users', section: 'users', viewer: req.viewer, flash: req.flash, body })
}

/** Revokes one of a user's personal tokens (needs `ns:tokens:manage`, checked by revokeToken). */
export async function revokeUserTokenAction(req: DashboardRequest): Promise<ActionResult> {
  await revokeToken(req.ctx, req.params.token, req.params.userId)
  return {
    redirect: href('namespaces', req.viewer.ns, 'users'),
    flash: `Token of ${req.params.userId} revoked.`,
  }
}
