import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { createUser } from '../support/admin'

const FW_PERMISSIONS = [
  'fw:access',
  'fw:clone',
  'fw:read',
  'fw:update:config',
  'fw:update:credentials',
  'fw:update:rule',
  'fw:update:exception',
  'fw:delete',
] as const
type FwPermission = (typeof FW_PERMISSIONS)[number]

const rule = {
  executionPhase: 'download',
  selector: { function: { name: 'packageName', patterns: ['x-*'] } },
  description: 'x',
}
const upstream = { id: 'up', endpoint: 'https://registry.example.com', credentials: { token: 'up-secret' } }

/**
 * Each firewall operation and the one permission it needs; success statuses per operation.
 * `grantsMore`: even its holder is refused here, because the operation would grant strings of the
 * matrix's permissions map that the holder lacks (the granting rule, docs/security.md).
 */
const FIREWALL_OPERATIONS: {
  permission: FwPermission
  grantsMore?: boolean
  call: (api: Api, fw: string, user: string) => ReturnType<Api>
}[] = [
  { permission: 'fw:read', call: (api, fw) => api('GET', `/v1/default/config/${fw}`) },
  { permission: 'fw:read', call: (api, fw) => api('GET', `/v1/default/config/${fw}/history`) },
  {
    permission: 'fw:update:rule',
    call: (api, fw, user) => api('PUT', `/v1/default/config/${fw}/rules/r-${user}`, rule),
  },
  {
    permission: 'fw:update:exception',
    call: (api, fw, user) =>
      api('PUT', `/v1/default/config/${fw}/exceptions/e-${user}`, { rule: 'base', selector: { packageName: 'x-a' } }),
  },
  {
    permission: 'fw:update:credentials',
    call: (api, fw) => api('PUT', `/v1/default/config/${fw}/upstreams/up/credentials`, { token: 'new-secret' }),
  },
  {
    permission: 'fw:clone',
    grantsMore: true,
    call: (api, fw, user) => api('POST', `/v1/default/config/${fw}/clone`, { id: `clone-${user}` }),
  },
]

describe('permission matrix', () => {
  let server: RunningServer
  let owner: Api
  const users: Record<string, Api> = {}
  beforeAll(async () => {
    server = await startServer()
    owner = apiClient(server.url, bootstrapToken(server))
    const names = [...FW_PERMISSIONS.map((p) => p.replace(/:/g, '-')), 'nobody', 'teamed', 'nsteam']
    const tokens = await Promise.all(names.map((name) => createUser(server, name)))
    names.forEach((name, i) => (users[name] = apiClient(server.url, tokens[i])))
    const permissions = Object.fromEntries(FW_PERMISSIONS.map((p) => [p.replace(/:/g, '-'), [p]]))
    for (const fw of ['matrix', 'open', 'doomed']) {
      const res = await owner('PUT', `/v1/default/config/${fw}`, {
        upstreams: [upstream],
        rules: [{ id: 'base', ...rule }],
        permissions: fw === 'open' ? { everybody: ['fw:read'] } : { ...permissions, 'team-readers': ['fw:read'] },
      })
      expect(res.status).toBe(201)
    }
    expect((await owner('POST', '/v1/default/teams', { id: 'team-readers', name: 'Readers' })).status).toBe(201)
    expect((await owner('POST', '/v1/default/teams/team-readers/members', { userId: 'teamed' })).status).toBe(201)
    expect(
      (
        await owner('POST', '/v1/default/teams', {
          id: 'team-ns',
          name: 'NS',
          permissions: ['fw:read', 'ns:teams:manage'],
        })
      ).status,
    ).toBe(201)
    expect((await owner('POST', '/v1/default/teams/team-ns/members', { userId: 'nsteam' })).status).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await server.stop()
  })

  for (const held of FW_PERMISSIONS) {
    it(`${held} allows exactly its firewall operations`, async () => {
      const user = held.replace(/:/g, '-')
      for (const operation of FIREWALL_OPERATIONS) {
        const res = await operation.call(users[user], 'matrix', user)
        if (operation.permission === held && operation.grantsMore) {
          expect(res.status, `${held} on ${operation.permission}`).toBe(403)
          expect(res.body.permission).not.toBe(held)
        } else if (operation.permission === held)
          expect(res.status, `${held} on ${operation.permission}`).toBeLessThan(300)
        else {
          expect(res.status, `${held} on ${operation.permission}`).toBe(403)
          expect(res.body.permission).toBe(operation.permission)
        }
      }
      const put = await users[user]('PUT', '/v1/default/config/matrix', {
        ...(await owner('GET', '/v1/default/config/matrix')).body,
        description: user,
      })
      expect(put.status).toBe(held === 'fw:update:config' ? 200 : 403)
    })
  }

  it('fw:delete deletes, nothing else does', async () => {
    expect((await users['fw-update-config']('DELETE', '/v1/default/config/doomed')).status).toBe(403)
    expect((await users['fw-delete']('DELETE', '/v1/default/config/doomed')).status).toBe(204)
  })

  it('a user without any permission on a firewall gets 404 and an empty list', async () => {
    expect((await users.nobody('GET', '/v1/default/config/matrix')).status).toBe(404)
    expect((await users.nobody('PUT', '/v1/default/config/matrix/rules/z', rule)).status).toBe(404)
    const list = await users.nobody('GET', '/v1/default/config')
    expect(list.body.map((fw: any) => fw.id)).toEqual(['open'])
  })

  it('list shows only what the caller can read', async () => {
    expect((await owner('POST', '/v1/default/config/matrix/clone', { id: 'clone-by-owner' })).status).toBe(201)
    const list = await users['fw-read']('GET', '/v1/default/config')
    // The clone made by the owner kept the permissions map, so it is readable too.
    expect(list.body.map((fw: any) => fw.id).sort()).toEqual(['clone-by-owner', 'matrix', 'open'])
    const access = await users['fw-access']('GET', '/v1/default/config')
    expect(access.body.map((fw: any) => fw.id)).toEqual(['open'])
  })

  it('everybody grants to every member', async () => {
    expect((await users.nobody('GET', '/v1/default/config/open')).status).toBe(200)
    expect((await users.nobody('PUT', '/v1/default/config/open/rules/z', rule)).status).toBe(403)
  })

  it('team membership grants the team id entries of a firewall', async () => {
    expect((await users.teamed('GET', '/v1/default/config/matrix')).status).toBe(200)
    expect((await users.teamed('GET', '/v1/default/teams')).status).toBe(200)
    expect((await users.teamed('POST', '/v1/default/teams', { name: 'nope' })).status).toBe(403)
  })

  it('namespace permissions of a team apply: fw:* on every firewall, ns:* to the namespace', async () => {
    const me = await users.nsteam('GET', '/v1/default/me')
    expect(me.body).toEqual({
      principal: { type: 'user', id: 'nsteam' },
      teams: ['team-ns'],
      permissions: ['fw:read', 'ns:teams:manage'],
    })
    expect((await users.nsteam('GET', '/v1/default/config/matrix')).status).toBe(200)
    expect((await users.nsteam('POST', '/v1/default/teams', { name: 'made' })).status).toBe(201)
    // No escalation: a team manager cannot hand out what it does not hold.
    const escalate = await users.nsteam('POST', '/v1/default/teams', { name: 'admins', permissions: ['ns:admin'] })
    expect(escalate.status).toBe(403)
    expect((await users.nsteam('POST', '/v1/default/license-sets', { name: 'x', licenses: ['MIT'] })).status).toBe(403)
  })

  it('service tokens act as their own principal with their own permissions', async () => {
    const created = await owner('POST', '/v1/default/tokens/service', {
      name: 'ci',
      permissions: ['fw:read', 'ns:firewalls:create'],
    })
    expect(created.status).toBe(201)
    expect(created.body.token).toMatch(/^fws_/)
    const service = apiClient(server.url, created.body.token)
    const me = await service('GET', '/v1/default/me')
    expect(me.body.principal).toEqual({ type: 'service', id: created.body.principalId })
    expect((await service('GET', '/v1/default/config/matrix')).status).toBe(200)
    expect((await service('PUT', '/v1/default/config/svc-made', {})).status).toBe(201)
    expect((await service('PUT', '/v1/default/config/matrix/rules/s', rule)).status).toBe(403)
    expect((await service('GET', '/v1/default/tokens/service')).status).toBe(403)
    expect((await service('POST', '/v1/default/tokens/personal', { name: 'p' })).status).toBe(403)
  })

  it("ns:tokens:manage governs service tokens; personal tokens are the caller's own", async () => {
    expect((await users.nobody('POST', '/v1/default/tokens/service', { name: 's', permissions: [] })).status).toBe(403)
    const mine = await users.nobody('POST', '/v1/default/tokens/personal', { name: 'laptop' })
    expect(mine.status).toBe(201)
    const list = await users.nobody('GET', '/v1/default/tokens/personal')
    expect(list.body.map((t: any) => t.name)).toContain('laptop')
    expect(JSON.stringify(list.body)).not.toContain(mine.body.token)
    expect((await users.teamed('DELETE', `/v1/default/tokens/${mine.body.id}`)).status).toBe(404)
    expect((await users.nobody('DELETE', `/v1/default/tokens/${mine.body.id}`)).status).toBe(204)
    expect((await apiClient(server.url, mine.body.token)('GET', '/v1/default/me')).status).toBe(401)
  })

  it('records the missing permission in the audit event of a refusal', async () => {
    await users['fw-read']('PUT', '/v1/default/config/matrix/rules/denied', rule)
    const audit = await owner('GET', '/v1/default/audit?outcome=failure&action=firewall.rule.upsert')
    const entry = audit.body.find((a: any) => a.actorUserId === 'fw-read')
    expect(entry).toMatchObject({ statusCode: 403, eventData: { permission: 'fw:update:rule' } })
  })
})
