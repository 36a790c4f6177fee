import type { NamespaceCall, NamespacePorts } from './ports'
import { hasNamespacePermission, requireNamespacePermission } from '../auth/permissions'
import { notFound } from '../common/errors'
import { publicToken } from './tokens'
import type { Team, UserRecord, UserSource } from './schema'
import type { TokenRecord } from '../../storage/repositories/tokens'

/** A known user as `GET /v1/{ns}/users` shows it (CONTRACT section 3). */
export interface UserView {
  id: string
  teams: string[]
  /** The latest of a provider sign-in and any use of one of the user's tokens. */
  lastSeenAt: string | null
  source: UserSource
}

const later = (a: string | null | undefined, b: string | null | undefined) =>
  !a ? (b ?? null) : !b ? a : a > b ? a : b

/** Every known user with their teams and last sighting, sorted by id. Pure over what was read. */
export function userViews(users: UserRecord[], teams: Team[], tokens: TokenRecord[]): UserView[] {
  const lastUse = new Map<string, string>()
  for (const token of tokens)
    if (token.kind === 'personal' && token.lastUsedAt)
      lastUse.set(token.principalId, later(lastUse.get(token.principalId), token.lastUsedAt)!)
  return users
    .map((user) => ({
      id: user.id,
      teams: teams.filter((team) => team.members.some((m) => m.userId === user.id)).map((team) => team.id),
      lastSeenAt: later(user.lastSeenAt, lastUse.get(user.id)),
      source: user.source ?? 'admin',
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

/** `GET /v1/{ns}/users` (needs `ns:teams:manage`). */
export async function listUsers(ctx: NamespaceCall): Promise<UserView[]> {
  requireNamespacePermission(ctx.principal, 'ns:teams:manage')
  return knownUsers(ctx.services, ctx.ns)
}

/** Every known user of `ns`, unchecked: for the operator's admin CLI (`list-users`). */
export async function knownUsers(
  services: Pick<NamespacePorts, 'namespaces' | 'teams' | 'tokens'>,
  ns: string,
): Promise<UserView[]> {
  if (!(await services.namespaces.get(ns))) throw notFound('namespace', ns)
  const [users, teams, tokens] = await Promise.all([
    services.namespaces.users(ns).all(),
    services.teams(ns).all(),
    services.tokens.list(ns),
  ])
  return userViews(users, teams, tokens)
}

/**
 * The users page: each user with their personal tokens. Tokens are listed only to a caller who
 * may revoke them (`ns:tokens:manage`); `tokens` is null otherwise.
 */
export async function listUsersWithTokens(ctx: NamespaceCall) {
  const views = await listUsers(ctx)
  if (!hasNamespacePermission(ctx.principal, 'ns:tokens:manage'))
    return views.map((view) => ({ ...view, tokens: null }))
  const now = ctx.services.clock.now()
  const tokens = (await ctx.services.tokens.list(ctx.ns)).filter(
    (t) => t.kind === 'personal' && !t.dashboardSession && (!t.expiresAt || Date.parse(t.expiresAt) > now),
  )
  return views.map((view) => ({
    ...view,
    tokens: tokens.filter((t) => t.principalId === view.id).map(publicToken),
  }))
}

/** Ids of the principals a form may name: known users, then teams (for permission pickers). */
export async function knownPrincipals(services: Pick<NamespacePorts, 'namespaces' | 'teams'>, ns: string) {
  const [users, teams] = await Promise.all([services.namespaces.users(ns).all(), services.teams(ns).all()])
  return { users: users.map((u) => u.id).sort(), teams: teams.map((t) => ({ id: t.id, name: t.name })) }
}

/**
 * Records a provider sign-in: the user becomes known in `ns` (source `oidc` unless known
 * already) with `lastSeenAt`, and their team memberships follow `groups`: a member of every
 * team whose id is one of the groups, and of no other.
 * @returns the ids of the teams the user belongs to now
 */
export async function recordProviderSignIn(
  services: Pick<NamespacePorts, 'namespaces' | 'teams' | 'clock'>,
  ns: string,
  userId: string,
  groups: readonly string[],
): Promise<string[]> {
  if (!(await services.namespaces.get(ns))) throw notFound('namespace', ns)
  const now = new Date(services.clock.now()).toISOString()
  await services.namespaces.users(ns).update((items) => {
    const known = items.get(userId)
    const record: UserRecord = known
      ? { ...known, lastSeenAt: now }
      : { id: userId, createdAt: now, source: 'oidc', lastSeenAt: now }
    return { items: items.set(userId, record), result: undefined }
  })
  const wanted = new Set(groups)
  return services.teams(ns).update((items) => {
    const memberOf: string[] = []
    for (const [id, team] of items) {
      const member = team.members.some((m) => m.userId === userId)
      if (wanted.has(id)) memberOf.push(id)
      if (wanted.has(id) && !member)
        items.set(id, { ...team, members: [...team.members, { userId, addedAt: now }], updatedAt: now })
      else if (!wanted.has(id) && member)
        items.set(id, { ...team, members: team.members.filter((m) => m.userId !== userId), updatedAt: now })
    }
    return { items, result: memberOf }
  })
}
