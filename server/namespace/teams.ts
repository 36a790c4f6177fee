import type { NamespaceCall } from './ports'
import { conflict, notFound } from '../common/errors'
import { newId } from '../common/ids'
import { requireGrantable, requireNamespacePermission } from '../auth/permissions'
import { nowIso } from '../auth/call-context'
import type { z } from 'zod'
import type { GrantablePermission, Team, TeamInput, TeamMember } from './schema'

type TeamBody = z.infer<typeof TeamInput>

/** The team as the API shows it (members are listed by their own endpoint). */
const publicTeam = ({ members: _members, ...team }: Team) => team

export async function listTeams(ctx: NamespaceCall) {
  return (await ctx.services.teams(ctx.ns).all()).sort((a, b) => a.createdAt.localeCompare(b.createdAt)).map(publicTeam)
}

export async function createTeam(ctx: NamespaceCall, body: TeamBody) {
  requireNamespacePermission(ctx.principal, 'ns:teams:manage')
  requireGrantable(ctx.principal, body.permissions)
  const id = body.id ?? newId('team', ctx.services.clock.now())
  const now = nowIso(ctx)
  return ctx.services.teams(ctx.ns).update((items) => {
    if (items.has(id)) throw conflict('team_exists', `team "${id}" already exists`)
    const team: Team = {
      id,
      name: body.name,
      permissions: body.permissions,
      members: [],
      createdAt: now,
      updatedAt: now,
    }
    return { items: items.set(id, team), result: publicTeam(team) }
  })
}

export async function updateTeam(ctx: NamespaceCall, id: string, body: TeamBody) {
  requireNamespacePermission(ctx.principal, 'ns:teams:manage')
  requireGrantable(ctx.principal, body.permissions)
  return ctx.services.teams(ctx.ns).update((items) => {
    const team = items.get(id)
    if (!team) throw notFound('team', id)
    const next: Team = { ...team, name: body.name, permissions: body.permissions, updatedAt: nowIso(ctx) }
    return { items: items.set(id, next), result: publicTeam(next) }
  })
}

export async function deleteTeam(ctx: NamespaceCall, id: string) {
  requireNamespacePermission(ctx.principal, 'ns:teams:manage')
  await ctx.services.teams(ctx.ns).update((items) => {
    if (!items.delete(id)) throw notFound('team', id)
    return { items, result: undefined }
  })
}

export async function listMembers(ctx: NamespaceCall, id: string): Promise<TeamMember[]> {
  const team = await ctx.services.teams(ctx.ns).find(id)
  if (!team) throw notFound('team', id)
  return team.members
}

export async function addMember(
  ctx: NamespaceCall,
  id: string,
  userId: string,
): Promise<{ member: TeamMember; created: boolean }> {
  requireNamespacePermission(ctx.principal, 'ns:teams:manage')
  return ctx.services.teams(ctx.ns).update<{ member: TeamMember; created: boolean }>((items) => {
    const team = items.get(id)
    if (!team) throw notFound('team', id)
    // Joining a team grants its permissions: only someone who could grant them may add members.
    requireGrantable(ctx.principal, team.permissions)
    const existing = team.members.find((m) => m.userId === userId)
    if (existing) return { items, result: { member: existing, created: false } }
    const member = { userId, addedAt: nowIso(ctx) }
    return { items: items.set(id, { ...team, members: [...team.members, member] }), result: { member, created: true } }
  })
}

export async function removeMember(ctx: NamespaceCall, id: string, userId: string) {
  requireNamespacePermission(ctx.principal, 'ns:teams:manage')
  await ctx.services.teams(ctx.ns).update((items) => {
    const team = items.get(id)
    if (!team) throw notFound('team', id)
    if (!team.members.some((m) => m.userId === userId)) throw notFound('team member', userId)
    return {
      items: items.set(id, { ...team, members: team.members.filter((m) => m.userId !== userId) }),
      result: undefined,
    }
  })
}

/**
 * Adds one namespace permission (or a `fw:*` string held on every firewall) to a team: how a
 * namespace-level grant reaches users, who hold their teams' permissions.
 */
export async function grantToTeam(ctx: NamespaceCall, id: string, permission: GrantablePermission) {
  requireNamespacePermission(ctx.principal, 'ns:teams:manage')
  requireGrantable(ctx.principal, [permission])
  return ctx.services.teams(ctx.ns).update((items) => {
    const team = items.get(id)
    if (!team) throw notFound('team', id)
    if (team.permissions.includes(permission)) return { items, result: publicTeam(team) }
    const next: Team = { ...team, permissions: [...team.permissions, permission], updatedAt: nowIso(ctx) }
    return { items: items.set(id, next), result: publicTeam(next) }
  })
}
