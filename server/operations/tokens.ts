import { z } from 'zod'
import { ClientId } from '../common/ids'
import { defineOperation } from '../http/operation'
import { member, namespace } from '../http/access'
import { PersonalTokenInput, ServiceTokenInput } from '../namespace/schema'
import {
  createPersonalToken,
  createServiceToken,
  listPersonalTokens,
  listServiceTokens,
  revokeToken,
} from '../namespace/tokens'
import { NsParams } from './common'

const tag = 'Tokens'
const audit = (action: string) => ({
  action,
  resourceType: 'token',
  resourceId: (p: Record<string, string | undefined>) => p.token,
})
const TokenView = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  principalId: z.string().optional(),
  permissions: z.array(z.string()).optional(),
  token: z.string().optional().describe('token material, on create only'),
})
const created = (ctx: { ns: string }, token: { id: string }) => ({
  status: 201,
  body: token,
  headers: { location: `/v1/${ctx.ns}/tokens/${token.id}` },
})

export const tokenOperations = [
  defineOperation({
    id: 'listPersonalTokens',
    method: 'GET',
    path: '/v1/{ns}/tokens/personal',
    summary: "List the caller's personal tokens",
    tag,
    params: NsParams,
    access: member,
    response: z.array(TokenView),
    audit: audit('token.personal.list'),
    handler: async ({ ctx }) => ({ body: await listPersonalTokens(ctx) }),
  }),
  defineOperation({
    id: 'createPersonalToken',
    method: 'POST',
    path: '/v1/{ns}/tokens/personal',
    summary: 'Create a personal token (material shown once)',
    tag,
    params: NsParams,
    access: member,
    body: PersonalTokenInput,
    response: TokenView,
    successStatus: 201,
    audit: audit('token.personal.create'),
    handler: async ({ ctx, body }) => created(ctx, await createPersonalToken(ctx, body)),
  }),
  defineOperation({
    id: 'listServiceTokens',
    method: 'GET',
    path: '/v1/{ns}/tokens/service',
    summary: 'List service tokens',
    tag,
    params: NsParams,
    access: namespace('ns:tokens:manage'),
    response: z.array(TokenView),
    audit: audit('token.service.list'),
    handler: async ({ ctx }) => ({ body: await listServiceTokens(ctx) }),
  }),
  defineOperation({
    id: 'createServiceToken',
    method: 'POST',
    path: '/v1/{ns}/tokens/service',
    summary: 'Create a service token (material shown once)',
    tag,
    params: NsParams,
    access: namespace('ns:tokens:manage'),
    body: ServiceTokenInput,
    response: TokenView,
    successStatus: 201,
    audit: audit('token.service.create'),
    handler: async ({ ctx, body }) => created(ctx, await createServiceToken(ctx, body)),
  }),
  defineOperation({
    id: 'revokeToken',
    method: 'DELETE',
    path: '/v1/{ns}/tokens/{token}',
    summary: 'Revoke a token',
    tag,
    params: NsParams.extend({ token: ClientId }),
    access: member,
    successStatus: 204,
    audit: audit('token.revoke'),
    handler: async ({ ctx, params }) => (await revokeToken(ctx, params.token), { status: 204 }),
  }),
]
