import { z } from 'zod'
import { ClientId } from '../common/ids'
import { invalid } from '../common/errors'
import { defineOperation } from '../http/operation'
import { firewall, firewallEdit, firewallWrite, member } from '../http/access'
import { Credentials, Exception, Firewall, FirewallInput, Rule } from '../firewall/schema'
import { parseFirewallInput } from '../firewall/input-parse'
import {
  MEMBER_LISTS,
  cloneFirewall,
  deleteFirewall,
  deleteMember,
  putFirewall,
  rollback,
  upsertMember,
  type MemberList,
} from '../firewall/commands'
import { firewallHistory, firewallVersion, getFirewallJson, listFirewallsBody } from '../firewall/queries'
import { setArtifactCredentials, setUpstreamCredentials } from '../firewall/credentials'
import { redactFirewall } from '../firewall/redact'
import { FwParams, NsParams, etagOf, ifMatchVersion, nextLink } from './common'

const tag = 'Firewalls'
const audit = (action: string) => ({
  action,
  resourceType: 'firewall',
  resourceId: (p: Record<string, string | undefined>) => p.fw,
})
const written = (firewall: Firewall, created: boolean, location: string) => ({
  status: created ? 201 : 200,
  body: redactFirewall(firewall),
  headers: { ...etagOf(firewall), ...(created ? { location } : {}) },
})

export const firewallOperations = [
  defineOperation({
    id: 'listFirewalls',
    method: 'GET',
    path: '/v1/{ns}/config',
    summary: 'List the firewalls the caller can read',
    tag,
    params: NsParams,
    access: member,
    response: z.array(Firewall),
    audit: audit('firewall.list'),
    handler: ({ ctx }) => {
      const body = listFirewallsBody(ctx)
      return body instanceof Promise ? body.then((json) => ({ json })) : { json: body }
    },
  }),
  defineOperation({
    id: 'getFirewall',
    method: 'GET',
    path: '/v1/{ns}/config/{fw}',
    summary: 'Get a firewall',
    tag,
    params: FwParams,
    access: firewall('fw:read'),
    response: Firewall,
    audit: audit('firewall.read'),
    handler: ({ ctx, params }) => {
      const reply = ({ json, version }: { json: string; version: number }) => ({ json, headers: etagOf({ version }) })
      const found = getFirewallJson(ctx, params.fw)
      return found instanceof Promise ? found.then(reply) : reply(found)
    },
  }),
  defineOperation({
    id: 'putFirewall',
    method: 'PUT',
    path: '/v1/{ns}/config/{fw}',
    summary: 'Create or replace a firewall',
    tag,
    params: FwParams,
    access: firewallWrite,
    body: FirewallInput,
    parseBody: parseFirewallInput,
    response: Firewall,
    audit: audit('firewall.put'),
    handler: async ({ ctx, params, body, headers, url }) => {
      const { firewall, created } = await putFirewall(ctx, params.fw, body, ifMatchVersion(headers))
      return written(firewall, created, url.pathname)
    },
  }),
  defineOperation({
    id: 'deleteFirewall',
    method: 'DELETE',
    path: '/v1/{ns}/config/{fw}',
    summary: 'Delete a firewall',
    tag,
    params: FwParams,
    access: firewall('fw:delete'),
    successStatus: 204,
    audit: audit('firewall.delete'),
    handler: async ({ ctx, params, headers }) => {
      await deleteFirewall(ctx, params.fw, ifMatchVersion(headers))
      return { status: 204 }
    },
  }),
  defineOperation({
    id: 'listFirewallHistory',
    method: 'GET',
    path: '/v1/{ns}/config/{fw}/history',
    summary: "List a firewall's versions, newest first",
    tag,
    params: FwParams,
    access: firewall('fw:read'),
    query: z.object({
      limit: z.coerce.number().int().min(1).max(1000).default(1000),
      cursor: z.coerce.number().int().min(1).optional(),
    }),
    response: z.array(
      z.object({
        version: z.number(),
        updatedAt: z.string(),
        actor: z.record(z.string(), z.string()),
        summary: z.string(),
      }),
    ),
    audit: audit('firewall.history.read'),
    handler: async ({ ctx, params, query, url }) => {
      const entries = await firewallHistory(ctx, params.fw, query.limit, query.cursor)
      const last = entries.at(-1)
      const more = entries.length === query.limit && last !== undefined && last.version > 1
      return { body: entries, headers: more ? nextLink(url, String(last.version)) : {} }
    },
  }),
  defineOperation({
    id: 'getFirewallVersion',
    method: 'GET',
    path: '/v1/{ns}/config/{fw}/version/{version}',
    summary: 'Get a firewall as it was at a version',
    tag,
    params: FwParams.extend({ version: z.coerce.number().int().min(1) }),
    access: firewall('fw:read'),
    response: Firewall,
    audit: audit('firewall.version.read'),
    handler: async ({ ctx, params }) => {
      const firewall = await firewallVersion(ctx, params.fw, params.version)
      return { body: firewall, headers: etagOf(firewall) }
    },
  }),
  defineOperation({
    id: 'rollbackFirewall',
    method: 'PUT',
    path: '/v1/{ns}/config/{fw}/version/{version}',
    summary: 'Roll back: a new version equal to an old one',
    tag,
    params: FwParams.extend({ version: z.coerce.number().int().min(1) }),
    access: firewall('fw:update:config'),
    response: Firewall,
    audit: audit('firewall.rollback'),
    handler: async ({ ctx, params, headers }) =>
      written(await rollback(ctx, params.fw, params.version, ifMatchVersion(headers)), false, ''),
  }),
  defineOperation({
    id: 'cloneFirewall',
    method: 'POST',
    path: '/v1/{ns}/config/{fw}/clone',
    summary: 'Clone a firewall under a new id',
    tag,
    params: FwParams,
    access: firewall('fw:clone'),
    body: z.object({ id: ClientId, name: z.string().min(1).max(200).optional() }).strict(),
    response: Firewall,
    successStatus: 201,
    audit: audit('firewall.clone'),
    handler: async ({ ctx, params, body }) => {
      const { firewall } = await cloneFirewall(ctx, params.fw, body.id, body.name)
      return written(firewall, true, `/v1/${ctx.ns}/config/${firewall.id}`)
    },
  }),
  ...memberOperations('rules', 'ruleId', Rule),
  ...memberOperations('exceptions', 'exceptionId', Exception),
  defineOperation({
    id: 'putUpstreamCredentials',
    method: 'PUT',
    path: '/v1/{ns}/config/{fw}/upstreams/{upstreamId}/credentials',
    summary: 'Set upstream credentials',
    tag,
    params: FwParams.extend({ upstreamId: ClientId }),
    access: firewall('fw:update:credentials'),
    body: Credentials,
    response: Firewall,
    audit: audit('firewall.credentials.update'),
    handler: async ({ ctx, params, body, headers }) =>
      written(
        await setUpstreamCredentials(ctx, params.fw, params.upstreamId, body, ifMatchVersion(headers)),
        false,
        '',
      ),
  }),
  defineOperation({
    id: 'putArtifactCredentials',
    method: 'PUT',
    path: '/v1/{ns}/config/{fw}/upstreams/{upstreamId}/artifact-credentials/{host}',
    summary: 'Set artifact host credentials',
    tag,
    params: FwParams.extend({
      upstreamId: ClientId,
      host: z
        .string()
        .min(1)
        .max(253)
        .regex(/^[A-Za-z0-9.:[\]-]+$/),
    }),
    access: firewall('fw:update:credentials'),
    body: z.object({ token: z.string().min(1) }).strict(),
    response: Firewall,
    audit: audit('firewall.artifact-credentials.update'),
    handler: async ({ ctx, params, body, headers }) =>
      written(
        await setArtifactCredentials(
          ctx,
          params.fw,
          params.upstreamId,
          params.host,
          body.token,
          ifMatchVersion(headers),
        ),
        false,
        '',
      ),
  }),
]

/** PUT and DELETE of one rule or one exception: the same shape for both lists. */
function memberOperations(list: MemberList, idParam: 'ruleId' | 'exceptionId', schema: typeof Rule | typeof Exception) {
  const noun = MEMBER_LISTS[list].noun
  const params = FwParams.extend({ [idParam]: ClientId }) as unknown as z.ZodType<
    { ns: string; fw: string } & Record<string, string>
  >
  const capital = noun[0].toUpperCase() + noun.slice(1)
  return [
    defineOperation({
      id: `put${capital}`,
      method: 'PUT',
      path: `/v1/{ns}/config/{fw}/${list}/{${idParam}}`,
      summary: `Create or replace one ${noun}`,
      tag,
      params,
      access: firewallEdit(MEMBER_LISTS[list].permission),
      body: (schema as z.ZodObject).extend({ id: ClientId.optional() }) as z.ZodType<{ id?: string }>,
      response: Firewall,
      audit: audit(`firewall.${noun}.upsert`),
      handler: async ({ ctx, params: p, body, headers, url }) => {
        if (body.id !== undefined && body.id !== p[idParam]) throw idMismatch(body.id, p[idParam])
        const { firewall, created } = await upsertMember(
          ctx,
          p.fw,
          list,
          { ...body, id: p[idParam] } as never,
          ifMatchVersion(headers),
        )
        return written(firewall, created, url.pathname)
      },
    }),
    defineOperation({
      id: `delete${capital}`,
      method: 'DELETE',
      path: `/v1/{ns}/config/{fw}/${list}/{${idParam}}`,
      summary: `Delete one ${noun}`,
      tag,
      params,
      access: firewallEdit(MEMBER_LISTS[list].permission),
      successStatus: 204,
      audit: audit(`firewall.${noun}.delete`),
      handler: async ({ ctx, params: p, headers }) => {
        await deleteMember(ctx, p.fw, list, p[idParam], ifMatchVersion(headers))
        return { status: 204 }
      },
    }),
  ]
}

function idMismatch(bodyId: string, pathId: string) {
  return invalid('id_mismatch', `body id "${bodyId}" differs from the path id "${pathId}"`, [
    { path: 'id', message: 'must equal the path id' },
  ])
}
