import { z } from 'zod'
import { ClientId } from '../common/ids'
import { defineOperation } from '../http/operation'
import { member, namespace } from '../http/access'
import { TeamInput, TeamMemberInput } from '../namespace/schema'
import { addMember, createTeam, deleteTeam, listMembers, listTeams, removeMember, updateTeam } from '../namespace/teams'
import { NsParams } from './common'

const tag = 'Teams'
const TeamParams = NsParams.extend({ team: ClientId })
const audit = (action: string) => ({
  action,
  resourceType: 'team',
  resourceId: (p: Record<string, string | undefined>) => p.team,
})
const TeamView = z.object({
  id: z.string(),
  name: z.string(),
  permissions: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
})
const MemberView = z.object({ userId: z.string(), addedAt: z.string() })

export const teamOperations = [
  defineOperation({
    id: 'listTeams',
    method: 'GET',
    path: '/v1/{ns}/teams',
    summary: 'List teams',
    tag,
    params: NsParams,
    access: member,
    response: z.array(TeamView),
    audit: audit('team.list'),
    handler: async ({ ctx }) => ({ body: await listTeams(ctx) }),
  }),
  defineOperation({
    id: 'createTeam',
    method: 'POST',
    path: '/v1/{ns}/teams',
    summary: 'Create a team',
    tag,
    params: NsParams,
    access: namespace('ns:teams:manage'),
    body: TeamInput,
    response: TeamView,
    successStatus: 201,
    audit: audit('team.create'),
    handler: async ({ ctx, body }) => {
      const team = await createTeam(ctx, body)
      return { status: 201, body: team, headers: { location: `/v1/${ctx.ns}/teams/${team.id}` } }
    },
  }),
  defineOperation({
    id: 'updateTeam',
    method: 'PUT',
    path: '/v1/{ns}/teams/{team}',
    summary: 'Update a team',
    tag,
    params: TeamParams,
    access: namespace('ns:teams:manage'),
    body: TeamInput,
    response: TeamView,
    audit: audit('team.update'),
    handler: async ({ ctx, params, body }) => ({ body: await updateTeam(ctx, params.team, body) }),
  }),
  defineOperation({
    id: 'deleteTeam',
    method: 'DELETE',
    path: '/v1/{ns}/teams/{team}',
    summary: 'Delete a team',
    tag,
    params: TeamParams,
    access: namespace('ns:teams:manage'),
    successStatus: 204,
    audit: audit('team.delete'),
    handler: async ({ ctx, params }) => (await deleteTeam(ctx, params.team), { status: 204 }),
  }),
  defineOperation({
    id: 'listTeamMembers',
    method: 'GET',
    path: '/v1/{ns}/teams/{team}/members',
    summary: 'List team members',
    tag,
    params: TeamParams,
    access: member,
    response: z.array(MemberView),
    audit: audit('team.member.list'),
    handler: async ({ ctx, params }) => ({ body: await listMembers(ctx, params.team) }),
  }),
  defineOperation({
    id: 'addTeamMember',
    method: 'POST',
    path: '/v1/{ns}/teams/{team}/members',
    summary: 'Add a team member',
    tag,
    params: TeamParams,
    access: namespace('ns:teams:manage'),
    body: TeamMemberInput,
    response: MemberView,
    successStatus: 201,
    audit: audit('team.member.add'),
    handler: async ({ ctx, params, body }) => {
      const { member, created } = await addMember(ctx, params.team, body.userId)
      return {
        status: created ? 201 : 200,
        body: member,
        headers: { location: `/v1/${ctx.ns}/teams/${params.team}/members/${member.userId}` },
      }
    },
  }),
  defineOperation({
    id: 'removeTeamMember',
    method: 'DELETE',
    path: '/v1/{ns}/teams/{team}/members/{userId}',
    summary: 'Remove a team member',
    tag,
    params: TeamParams.extend({ userId: ClientId }),
    access: namespace('ns:teams:manage'),
    successStatus: 204,
    audit: audit('team.member.remove'),
    handler: async ({ ctx, params }) => (await removeMember(ctx, params.team, params.userId), { status: 204 }),
  }),
]
