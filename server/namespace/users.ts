import type { NamespaceCall, NamespacePorts } from './ports'
import { hasNamespacePermission, requireNamespacePermission } from '../auth/permissions'
import { DomainError, notFound } from '../common/errors'
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
 * already) with `lastSeenAt`, and their team memberships follow `groups` (when the provider sent
 * the claim at all): a member of every team whose id is one of the groups, and of no other.
 *
 * The user id comes from a claim the provider may let users edit (`preferred_username`), so it
 * may not name another kind of principal (a team, `everybody`), and the first provider sign-in
 * binds the id to the provider's subject (`iss` and `sub`): a later sign-in of another subject
 * under the same id is refused, not merged into that user.
 * @returns the ids of the teams the user belongs to now
 */
export async function recordProviderSignIn(
  services: Pick<NamespacePorts, 'namespaces' | 'teams' | 'clock'>,
  ns: string,
  userId: string,
  groups: readonly string[] | null,
  subject?: string,
): Promise<string[]> {
  if (!(await services.namespaces.get(ns))) throw notFound('namespace', ns)
  const teams = services.teams(ns)
  if (userId === EVERYBODY || (await teams.all()).some((team) => team.id === userId))
    throw signInRefused(`the user id "${userId}" names a team or everybody, not a user`)
  const now = new Date(services.clock.now()).toISOString()
  await services.namespaces.users(ns).update((items) => {
    const known = items.get(userId)
    if (known?.subject && subject && known.subject !== subject)
      throw signInRefused(`the user id "${userId}" belongs to another account of the provider`)
    const record: UserRecord = known
      ? { ...known, lastSeenAt: now, ...(subject && !known.subject ? { subject } : {}) }
      : { id: userId, createdAt: now, source: 'oidc', lastSeenAt: now, ...(subject ? { subject } : {}) }
    return { items: items.set(userId, record), result: undefined }
  })
  if (groups === null) {
    // No groups claim in the answer: memberships stay as they are rather than all being dropped.
    return (await teams.all()).filter((team) => team.members.some((m) => m.userId === userId)).map((t) => t.id)
  }
  const wanted = new Set(groups)
  return teams.update((items) => {
    const memberOf: string[] = []
    let changed = false
    for (const [id, team] of items) {
      const member = team.members.some((m) => m.userId === userId)
      if (wanted.has(id)) memberOf.push(id)
      if (wanted.has(id) === member) continue
      changed = true
      items.set(
        id,
        member
          ? { ...team, members: team.members.filter((m) => m.userId !== userId), updatedAt: now }
          : { ...team, members: [...team.members, { userId, addedAt: now }], updatedAt: now },
      )
    }
    // Memberships as they were (most sign-ins): no write, so no process's token lookups end.
    return { items: changed ? items : null, result: memberOf }
  })
}

/** The principal key every authenticated caller holds (server/auth/permissions.ts). */
const EVERYBODY = 'everybody'

const signInRefused = (message: string) => new DomainError('unauthenticated', 'oidc_sign_in_refused', message)
