import { z } from 'zod'
import { defineOperation } from '../http/operation'
import { namespace } from '../http/access'
import { listUsers } from '../namespace/users'
import { NsParams } from './common'

const UserView = z.object({
  id: z.string(),
  teams: z.array(z.string()),
  lastSeenAt: z.string().nullable(),
  source: z.enum(['oidc', 'admin', 'bootstrap']),
})

export const userOperations = [
  defineOperation({
    id: 'listUsers',
    method: 'GET',
    path: '/v1/{ns}/users',
    summary: 'List known users (from provider sign-ins, the admin CLI and the bootstrap)',
    tag: 'Users',
    params: NsParams,
    access: namespace('ns:teams:manage'),
    response: z.array(UserView),
    audit: { action: 'user.list', resourceType: 'user' },
    handler: async ({ ctx }) => ({ body: await listUsers(ctx) }),
  }),
]
