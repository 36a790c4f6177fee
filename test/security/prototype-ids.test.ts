import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { adminCli } from '../support/admin'
import { redisUrl, uniquePrefix } from '../support/redis'

/**
 * Finding 2 (ids): names of built-in object properties are ordinary ids or
 * refused with 400, never a 5xx and never a broken namespace. Every id-bearing path is driven with
 * each name; after every call the namespace must still answer its owner's reads.
 * `__proto__` is refused (400): the client id pattern cannot start with `_`.
 */
const IDS = ['constructor', '__proto__', 'valueOf', 'toString', 'hasOwnProperty'] as const
const ORDINARY = IDS.filter((id) => id !== '__proto__')
const TOKEN = `fwp_${'p'.repeat(43)}`
const LISTS = ['config', 'teams', 'license-sets', 'webhooks', 'tokens/personal', 'tokens/service', 'audit']
const rule = (id: string) => ({
  id,
  executionPhase: 'download',
  selector: { function: { name: 'packageName', patterns: ['x-*'] } },
})
const webhook = (id?: string) => ({
  ...(id ? { id } : {}),
  name: 'hook',
  url: 'http://127.0.0.1:9/hook',
  eventTypes: ['exception-request.approved'],
})

describe.each(['fs', 'redis'] as const)('built-in property names as ids (%s)', (kind) => {
  let server: RunningServer
  let owner: Api

  /** The owner's reads of the namespace all still answer 200. */
  async function expectUsable(api: Api, ns: string, after: string): Promise<void> {
    const me = await api('GET', `/v1/${ns}/me`)
    expect(me.status, `GET /me after ${after}: ${JSON.stringify(me.body)}`).toBe(200)
    for (const list of LISTS) {
      const res = await api('GET', `/v1/${ns}/${list}`)
      expect(res.status, `GET ${list} after ${after}: ${JSON.stringify(res.body)}`).toBe(200)
      expect(Array.isArray(res.body), `GET ${list} is a list`).toBe(true)
    }
  }

  /** One call by the owner: its status must be `expected` (never 5xx), and the namespace stays usable. */
  async function call(method: string, path: string, body: unknown, expected: number) {
    const res = await owner(method, path, body)
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(expected)
    await expectUsable(owner, 'default', `${method} ${path}`)
    return res
  }

  const at = (id: string) => encodeURIComponent(id)

  beforeAll(async () => {
    const env: Record<string, string> = {
      BOOTSTRAP_TOKEN: TOKEN,
      API_RATE_LIMIT: 'off',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
    }
    if (kind === 'redis') Object.assign(env, { REDIS_URL: await redisUrl(), REDIS_PREFIX: uniquePrefix('proto-ids') })
    server = await startServer(env)
    owner = apiClient(server.url, TOKEN)
    const base = await owner('PUT', '/v1/default/config/base', { rules: [rule('base-rule')] })
    expect(base.status).toBe(201)
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  it('teams: PUT of an absent team is a 404 (the reported break), then create, update, members, delete', async () => {
    for (const id of IDS) {
      const ordinary = id !== '__proto__'
      await call('PUT', `/v1/default/teams/${at(id)}`, { name: 'n', permissions: [] }, ordinary ? 404 : 400)
      await call('GET', `/v1/default/teams/${at(id)}/members`, undefined, ordinary ? 404 : 400)
      await call('DELETE', `/v1/default/teams/${at(id)}`, undefined, ordinary ? 404 : 400)
      await call('POST', `/v1/default/teams/${at(id)}/members`, { userId: 'someone' }, ordinary ? 404 : 400)
      const created = await call(
        'POST',
        '/v1/default/teams',
        { id, name: `team ${id}`, permissions: ['fw:read'] },
        ordinary ? 201 : 400,
      )
      if (!ordinary) continue
      expect(created.body).toMatchObject({ id, name: `team ${id}`, permissions: ['fw:read'] })
      await call('POST', '/v1/default/teams', { id, name: 'again' }, 409)
      const updated = await call('PUT', `/v1/default/teams/${at(id)}`, { name: 'renamed', permissions: [] }, 200)
      expect(updated.body).toMatchObject({ id, name: 'renamed', permissions: [] })
      expect(
        (await owner('GET', '/v1/default/teams')).body.filter((team: { id: string }) => team.id === id),
      ).toHaveLength(1)
      for (const userId of IDS) {
        await call('POST', `/v1/default/teams/${at(id)}/members`, { userId }, userId === '__proto__' ? 400 : 201)
      }
      const members = await call('GET', `/v1/default/teams/${at(id)}/members`, undefined, 200)
      expect(members.body.map((m: { userId: string }) => m.userId)).toEqual(ORDINARY)
      for (const userId of IDS) {
        await call(
          'DELETE',
          `/v1/default/teams/${at(id)}/members/${at(userId)}`,
          undefined,
          userId === '__proto__' ? 400 : 204,
        )
      }
      await call('DELETE', `/v1/default/teams/${at(id)}/members/${at(id)}`, undefined, 404)
      await call('DELETE', `/v1/default/teams/${at(id)}`, undefined, 204)
      await call('DELETE', `/v1/default/teams/${at(id)}`, undefined, 404)
    }
  }, 120_000)

  it('license sets: read, update and delete of absent ones are 404; create, read, update, delete', async () => {
    for (const id of IDS) {
      const ordinary = id !== '__proto__'
      await call('GET', `/v1/default/license-sets/${at(id)}`, undefined, ordinary ? 404 : 400)
      await call('PUT', `/v1/default/license-sets/${at(id)}`, { name: 'n', licenses: ['MIT'] }, ordinary ? 404 : 400)
      await call('DELETE', `/v1/default/license-sets/${at(id)}`, undefined, ordinary ? 404 : 400)
      await call(
        'POST',
        '/v1/default/license-sets',
        { id, name: 'permissive', licenses: ['MIT'] },
        ordinary ? 201 : 400,
      )
      if (!ordinary) continue
      await call('POST', '/v1/default/license-sets', { id, name: 'again', licenses: [] }, 409)
      expect((await call('GET', `/v1/default/license-sets/${at(id)}`, undefined, 200)).body).toMatchObject({
        id,
        licenses: ['MIT'],
      })
      const updated = await call('PUT', `/v1/default/license-sets/${at(id)}`, { name: 'n2', licenses: ['ISC'] }, 200)
      expect(updated.body).toMatchObject({ id, name: 'n2', licenses: ['ISC'] })
      await call('DELETE', `/v1/default/license-sets/${at(id)}`, undefined, 204)
      await call('GET', `/v1/default/license-sets/${at(id)}`, undefined, 404)
    }
  }, 120_000)

  it('firewalls, upstreams, rules, exceptions, credentials, history, clone and exception requests', async () => {
    for (const id of IDS) {
      const fw = `/v1/default/config/${at(id)}`
      if (id === '__proto__') {
        for (const [method, suffix] of [
          ['GET', ''],
          ['DELETE', ''],
          ['PUT', '/rules/r'],
          ['GET', '/exception-requests'],
        ] as const) {
          await call(method, `${fw}${suffix}`, method === 'PUT' ? rule('r') : undefined, 400)
        }
        // Ids inside a body are client ids too.
        await call(
          'PUT',
          '/v1/default/config/holder',
          { upstreams: [{ id, endpoint: 'https://registry.example.com/' }] },
          400,
        )
        await call('PUT', '/v1/default/config/holder', { rules: [rule(id)] }, 400)
        await call('POST', '/v1/default/config/base/clone', { id }, 400)
        continue
      }
      await call('GET', fw, undefined, 404)
      await call('DELETE', fw, undefined, 404)
      await call('PUT', `${fw}/rules/${at(id)}`, rule(id), 404)
      const created = await call(
        'PUT',
        fw,
        {
          upstreams: [{ id, endpoint: 'https://registry.example.com/' }],
          rules: [rule(id)],
          exceptions: [{ id, rule: id, selector: { packageName: 'x-a' } }],
          permissions: { [id]: ['fw:read'] },
        },
        201,
      )
      expect(created.body).toMatchObject({ id, upstreams: [{ id }], rules: [{ id }], exceptions: [{ id }] })
      expect(Object.keys(created.body.permissions)).toEqual([id])
      const read = await call('GET', fw, undefined, 200)
      expect(read.body.permissions[id]).toEqual(['fw:read'])
      await call('PUT', `${fw}/rules/${at(id)}`, { ...rule(id), description: 'changed' }, 200)
      await call('PUT', `${fw}/exceptions/${at(id)}`, { rule: id, selector: { packageName: 'x-b' } }, 200)
      await call('PUT', `${fw}/upstreams/${at(id)}/credentials`, { token: 'secret-token' }, 200)
      await call('PUT', `${fw}/upstreams/${at(id)}/artifact-credentials/cdn.example.com`, { token: 'cdn-token' }, 200)
      await call('GET', `${fw}/history`, undefined, 200)

      // Exception requests: ids are generated, so one named after a built-in never exists.
      const request = await call(
        'POST',
        `${fw}/exception-requests`,
        { proposedException: { id: `${id}-ex`, rule: id, selector: { packageName: 'x-c' } }, justification: 'needed' },
        201,
      )
      expect(request.body.status).toBe('pending')
      await call('GET', `${fw}/exception-requests/${at(id)}`, undefined, 404)
      for (const action of ['approve', 'deny', 'withdraw'])
        await call('POST', `${fw}/exception-requests/${at(id)}/${action}`, {}, 404)
      await call('GET', `${fw}/exception-requests`, undefined, 200)

      await call('DELETE', `${fw}/exceptions/${at(id)}`, undefined, 204)
      await call('DELETE', `${fw}/exceptions/${at(id)}`, undefined, 404)
      await call('DELETE', `${fw}/rules/${at(id)}`, undefined, 204)
      await call('PUT', `${fw}/version/1`, undefined, 200)
      await call('DELETE', fw, undefined, 204)
      await call('GET', fw, undefined, 404)
      // A deleted id comes back with its version history continued, by clone this time.
      const cloned = await call('POST', '/v1/default/config/base/clone', { id }, 201)
      expect(cloned.body.version).toBeGreaterThan(created.body.version)
      await call('DELETE', fw, undefined, 204)
    }
  }, 180_000)

  it('refuses `__proto__` as a principal key of a firewall instead of dropping it', async () => {
    const res = await call(
      'PUT',
      '/v1/default/config/holder',
      JSON.parse('{"permissions": {"__proto__": ["fw:read"], "constructor": ["fw:read"]}}'),
      400,
    )
    expect(JSON.stringify(res.body.errors)).toContain('__proto__')
  })

  it('webhooks: absent ones are 404; one created with such an id is listed, read, updated and deleted', async () => {
    for (const id of IDS) {
      const ordinary = id !== '__proto__'
      const path = `/v1/default/webhooks/${at(id)}`
      for (const [method, suffix, body] of [
        ['GET', ''],
        ['PUT', '', webhook()],
        ['DELETE', ''],
        ['GET', '/state'],
        ['GET', '/secret'],
        ['GET', '/deliveries'],
      ] as const) {
        await call(method, `${path}${suffix}`, body, ordinary ? 404 : 400)
      }
      const created = await call('POST', '/v1/default/webhooks', webhook(id), ordinary ? 201 : 400)
      if (!ordinary) continue
      expect(created.body.id).toBe(id)
      // The namespace index must hold it: a webhook missing from the index is never listed nor delivered.
      expect((await owner('GET', '/v1/default/webhooks')).body.map((w: { id: string }) => w.id)).toContain(id)
      await call('GET', path, undefined, 200)
      await call('PUT', path, { ...webhook(), name: 'renamed' }, 200)
      await call('GET', `${path}/state`, undefined, 200)
      await call('DELETE', path, undefined, 204)
      expect((await owner('GET', '/v1/default/webhooks')).body.map((w: { id: string }) => w.id)).not.toContain(id)
    }
  }, 120_000)

  it('tokens: revoking one by such an id is a 404 (400 for `__proto__`) and the caller keeps working', async () => {
    for (const id of IDS)
      await call('DELETE', `/v1/default/tokens/${at(id)}`, undefined, id === '__proto__' ? 400 : 404)
  })

  it('users named after built-ins authenticate and see exactly their permissions', async () => {
    await expect(adminCli(server, 'create-user', '--namespace', 'default', '--user', '__proto__')).rejects.toThrow(
      /must match/,
    )
    // A Map: these ids are exactly the keys a plain object would answer for by itself.
    const users = new Map<string, Api>()
    for (const id of ['constructor', 'valueOf', 'hasOwnProperty']) {
      users.set(
        id,
        apiClient(server.url, await adminCli(server, 'create-user', '--namespace', 'default', '--user', id)),
      )
    }
    const asConstructor = users.get('constructor')!
    const asValueOf = users.get('valueOf')!
    const asHasOwnProperty = users.get('hasOwnProperty')!
    await expect(adminCli(server, 'create-user', '--namespace', 'default', '--user', 'constructor')).rejects.toThrow(
      /already exists/,
    )
    // Before any grant: no firewall is visible to them, and nothing answers 500.
    for (const [id, api] of users) {
      expect((await api('GET', '/v1/default/me')).body).toEqual({
        principal: { type: 'user', id },
        teams: [],
        permissions: [],
      })
      expect((await api('GET', '/v1/default/config')).body).toEqual([])
      expect((await api('GET', '/v1/default/config/base')).status).toBe(404)
    }
    await call('POST', '/v1/default/teams', { id: 'toString', name: 'auditors', permissions: ['ns:audit:read'] }, 201)
    await call('POST', '/v1/default/teams/toString/members', { userId: 'hasOwnProperty' }, 201)
    await call(
      'PUT',
      '/v1/default/config/shared',
      { permissions: { constructor: ['fw:read'], toString: ['fw:read', 'fw:access'] } },
      201,
    )

    const visible = async (api: Api) => (await api('GET', '/v1/default/config')).body.map((fw: { id: string }) => fw.id)
    expect(await visible(asConstructor)).toEqual(['shared'])
    expect((await asConstructor('GET', '/v1/default/me')).body).toEqual({
      principal: { type: 'user', id: 'constructor' },
      teams: [],
      permissions: [],
    })
    expect((await asConstructor('GET', '/v1/default/config/shared')).status).toBe(200)
    expect((await asConstructor('PUT', '/v1/default/config/shared', {})).status).toBe(403)
    expect((await asConstructor('GET', '/v1/default/audit')).status).toBe(403)

    expect(await visible(asValueOf)).toEqual([])
    expect((await asValueOf('GET', '/v1/default/config/shared')).status).toBe(404)

    expect((await asHasOwnProperty('GET', '/v1/default/me')).body).toEqual({
      principal: { type: 'user', id: 'hasOwnProperty' },
      teams: ['toString'],
      permissions: ['ns:audit:read'],
    })
    expect(await visible(asHasOwnProperty)).toEqual(['shared'])
    expect((await asHasOwnProperty('GET', '/v1/default/audit')).status).toBe(200)
    expect((await asHasOwnProperty('DELETE', '/v1/default/config/shared')).status).toBe(403)
  }, 120_000)

  it('namespaces named after built-ins, created through the admin CLI, work like any other', async () => {
    await expect(adminCli(server, 'create-namespace', '--namespace', '__proto__', '--user', 'someone')).rejects.toThrow(
      /must match/,
    )
    for (const [ns, user] of [
      ['constructor', 'valueOf'],
      ['toString', 'constructor'],
      ['hasOwnProperty', 'hasOwnProperty'],
    ]) {
      const api = apiClient(server.url, await adminCli(server, 'create-namespace', '--namespace', ns, '--user', user))
      expect((await api('GET', `/v1/${ns}/me`)).body).toEqual({
        principal: { type: 'user', id: user },
        teams: [],
        permissions: ['ns:admin'],
      })
      await expectUsable(api, ns, `create-namespace ${ns}`)
      expect((await api('PUT', `/v1/${ns}/teams/valueOf`, { name: 'n' })).status).toBe(404)
      expect((await api('POST', `/v1/${ns}/teams`, { id: 'valueOf', name: 'n' })).status).toBe(201)
      expect((await api('PUT', `/v1/${ns}/license-sets/toString`, { name: 'n', licenses: [] })).status).toBe(404)
      expect((await api('PUT', `/v1/${ns}/config/constructor`, { permissions: { [user]: ['fw:read'] } })).status).toBe(
        201,
      )
      await expectUsable(api, ns, `changes in namespace ${ns}`)
      // Tokens are bound to their namespace, whatever it is called.
      expect((await api('GET', '/v1/default/me')).status).toBe(401)
      expect((await owner('GET', `/v1/${ns}/me`)).status).toBe(401)
      const member = apiClient(
        server.url,
        await adminCli(server, 'create-user', '--namespace', ns, '--user', `${user}-2`),
      )
      expect((await member('GET', `/v1/${ns}/config`)).body).toEqual([])
    }
    await expect(adminCli(server, 'create-namespace', '--namespace', 'constructor', '--user', 'x')).rejects.toThrow(
      /already exists/,
    )
    await expectUsable(owner, 'default', 'the namespaces above')
  }, 180_000)
})
