import { z } from 'zod'
import { defineOperation } from '../http/operation'
import { member, namespace } from '../http/access'
import { namespacePermissions } from '../auth/permissions'
import { queryAuditLog } from '../namespace/audit-log'
import { AuditData } from '../events/schemas'
import { NsParams, PageQuery, nextLink } from './common'

export const namespaceOperations = [
  defineOperation({
    id: 'me',
    method: 'GET',
    path: '/v1/{ns}/me',
    summary: 'Who am I: principal, teams, effective permissions',
    tag: 'Namespace',
    params: NsParams,
    access: member,
    response: z.object({
      principal: z.object({ type: z.enum(['user', 'service']), id: z.string() }),
      teams: z.array(z.string()),
      permissions: z.array(z.string()),
    }),
    audit: { action: 'me.read', resourceType: 'principal' },
    handler: async ({ ctx }) => ({
      body: {
        principal: { type: ctx.principal.type, id: ctx.principal.id },
        teams: ctx.principal.teams,
        permissions: namespacePermissions(ctx.principal),
      },
    }),
  }),
  defineOperation({
    id: 'listAuditLog',
    method: 'GET',
    path: '/v1/{ns}/audit',
    summary: 'The namespace audit log, newest first',
    tag: 'Namespace',
    params: NsParams,
    access: namespace('ns:audit:read'),
    query: PageQuery.extend({
      action: z.string().max(200).optional(),
      outcome: z.enum(['success', 'failure']).optional(),
      since: z.iso.datetime({ offset: true }).optional(),
    }),
    response: z.array(AuditData.extend({ id: z.string(), time: z.string() })),
    audit: { action: 'audit.read', resourceType: 'audit-log' },
    handler: async ({ ctx, query, url }) => {
      const { entries, nextCursor } = await queryAuditLog(ctx, query)
      return { body: entries, headers: nextLink(url, nextCursor) }
    },
  }),
]
