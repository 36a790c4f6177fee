import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { createUser } from '../support/admin'

/**
 * Finding 3: a user holding only fw:read and fw:update:config must not grant anyone (itself,
 * a team, everybody) a permission it does not hold, through PUT, rollback or clone
 * (docs/security.md, granting).
 */
const ALL = [
  'fw:access',
  'fw:clone',
  'fw:read',
  'fw:update:config',
  'fw:update:credentials',
  'fw:update:rule',
  'fw:update:exception',
  'fw:delete',
]
const MALLORY = ['fw:read', 'fw:update:config']
const OTHERS = ALL.filter((permission) => !MALLORY.includes(permission))
const upstream = { id: 'main', endpoint: 'https://registry.example.com/', credentials: { token: 'stored-secret' } }

describe('granting permissions on a firewall', () => {
  let server: RunningServer
  let owner: Api
  let mallory: Api
  let cloner: Api

  /** The firewall as the owner sees it now. */
  const read = async (fw: string) => (await owner('GET', `/v1/default/config/${fw}`)).body
  /** Mallory's PUT of the firewall as read, with `permissions` replaced. */
  const putPermissions = async (fw: string, permissions: Record<string, string[]>) =>
    mallory('PUT', `/v1/default/config/${fw}`, { ...(await read(fw)), permissions })

  beforeAll(async () => {
    server = await startServer({ UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' })
    owner = apiClient(server.url, bootstrapToken(server))
    const [malloryToken, clonerToken] = await Promise.all([createUser(server, 'mallory'), createUser(server, 'cloner')])
    mallory = apiClient(server.url, malloryToken)
    cloner = apiClient(server.url, clonerToken)
    expect((await owner('POST', '/v1/default/teams', { id: 'team-devs', name: 'Devs' })).status).toBe(201)
    for (const fw of ['target', 'rolled']) {
      const created = await owner('PUT', `/v1/default/config/${fw}`, {
        upstreams: [upstream],
        permissions: { mallory: MALLORY, 'team-devs': ['fw:read'], cloner: ['fw:clone', 'fw:read'] },
      })
      expect(created.status).toBe(201)
    }
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
  })

  for (const permission of OTHERS) {
    it(`refuses a self-grant of ${permission} and changes nothing`, async () => {
      const before = await read('target')
      const res = await putPermissions('target', { ...before.permissions, mallory: [...MALLORY, permission] })
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ code: 'permission_denied', permission })
      expect(res.body.detail).toContain(`cannot grant ${permission}`)
      const after = await read('target')
      expect(after.version).toBe(before.version)
      expect(after.permissions).toEqual(before.permissions)
    })
  }

  it('refuses the whole list of fw:* strings (the reported exploit), and the credentials stay unreachable', async () => {
    const before = await read('target')
    const res = await putPermissions('target', { ...before.permissions, mallory: ALL })
    expect(res.status).toBe(403)
    expect(OTHERS).toContain(res.body.permission)
    const creds = await mallory('PUT', '/v1/default/config/target/upstreams/main/credentials', { token: 'mine' })
    expect(creds.status).toBe(403)
    expect((await read('target')).version).toBe(before.version)
  })

  it('refuses granting to everybody or to a team what the caller lacks', async () => {
    const before = await read('target')
    const toEverybody = await putPermissions('target', { ...before.permissions, everybody: ['fw:access'] })
    expect(toEverybody.status).toBe(403)
    expect(toEverybody.body.permission).toBe('fw:access')
    const toTeam = await putPermissions('target', { ...before.permissions, 'team-devs': ['fw:read', 'fw:update:rule'] })
    expect(toTeam.status).toBe(403)
    expect(toTeam.body.permission).toBe('fw:update:rule')
    expect((await read('target')).permissions).toEqual(before.permissions)
  })

  it('lets the caller grant what it holds itself, and remove grants', async () => {
    const before = await read('target')
    const grant = await putPermissions('target', { ...before.permissions, everybody: ['fw:read'] })
    expect(grant.status).toBe(200)
    expect(grant.body.permissions.everybody).toEqual(['fw:read'])
    const { everybody: _granted, 'team-devs': _removed, ...rest } = grant.body.permissions
    const removal = await putPermissions('target', rest)
    expect(removal.status).toBe(200)
    expect(removal.body.permissions).toEqual(rest)
    expect(removal.body.version).toBe(before.version + 2)
  })

  it('refuses a rollback to a version that granted more, which the owner may do', async () => {
    const v1 = await read('rolled')
    const wider = { ...v1.permissions, everybody: ['fw:access'], 'team-devs': ['fw:read', 'fw:delete'] }
    const widened = await owner('PUT', '/v1/default/config/rolled', { ...v1, permissions: wider })
    expect(widened.status).toBe(200)
    // The owner narrows it again; the older, wider version stays in the history.
    const narrowed = await owner('PUT', '/v1/default/config/rolled', { ...widened.body, permissions: v1.permissions })
    expect(narrowed.status).toBe(200)
    const refused = await mallory('PUT', `/v1/default/config/rolled/version/${widened.body.version}`)
    expect(refused.status).toBe(403)
    expect(['fw:access', 'fw:delete']).toContain(refused.body.permission)
    expect((await read('rolled')).version).toBe(narrowed.body.version)
    const allowed = await owner('PUT', `/v1/default/config/rolled/version/${widened.body.version}`)
    expect(allowed.status).toBe(200)
    expect(allowed.body.permissions.everybody).toEqual(['fw:access'])
  })

  it('lets the caller roll back to a version that only removes grants', async () => {
    const current = await read('rolled')
    const { everybody: _dropped, ...rest } = current.permissions
    const narrowed = await owner('PUT', '/v1/default/config/rolled', { ...current, permissions: rest })
    expect(narrowed.status).toBe(200)
    const back = await owner('PUT', `/v1/default/config/rolled/version/${current.version}`)
    expect(back.status).toBe(200)
    // Rolling back to the narrower version removes `everybody` again: removing needs only fw:update:config.
    const res = await mallory('PUT', `/v1/default/config/rolled/version/${narrowed.body.version}`)
    expect(res.status).toBe(200)
    expect(res.body.permissions.everybody).toBeUndefined()
  })

  it('refuses a clone that would grant more than the cloner holds on the source', async () => {
    const res = await cloner('POST', '/v1/default/config/target/clone', { id: 'stolen' })
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('permission_denied')
    // The first string of the source's map the cloner lacks (it holds fw:clone and fw:read).
    expect(res.body.permission).toBe('fw:update:config')
    expect((await owner('GET', '/v1/default/config/stolen')).status).toBe(404)
  })

  it('lets a cloner clone a source whose grants it holds itself', async () => {
    const permissions = { cloner: ['fw:clone', 'fw:read'], everybody: ['fw:read'] }
    const source = await owner('PUT', '/v1/default/config/small', { permissions })
    expect(source.status).toBe(201)
    const res = await cloner('POST', '/v1/default/config/small/clone', { id: 'small-copy' })
    expect(res.status).toBe(201)
    expect(res.body.permissions).toEqual(source.body.permissions)
  })

  it("does not hand a deleted firewall's history to whoever creates its id again", async () => {
    // The owner had a firewall with a secret and wide grants, then deleted it.
    const wide = { upstreams: [upstream], permissions: { everybody: ['fw:access'] } }
    const old = await owner('PUT', '/v1/default/config/reborn', wide)
    expect(old.status).toBe(201)
    expect((await owner('PUT', '/v1/default/config/reborn', { ...old.body, description: 'v2' })).status).toBe(200)
    expect((await owner('DELETE', '/v1/default/config/reborn')).status).toBe(204)
    // A creator (ns:firewalls:create) makes the id again and grants itself everything on it: its own firewall.
    const makers = { id: 'team-makers', name: 'Makers', permissions: ['ns:firewalls:create'] }
    expect((await owner('POST', '/v1/default/teams', makers)).status).toBe(201)
    expect((await owner('POST', '/v1/default/teams/team-makers/members', { userId: 'mallory' })).status).toBe(201)
    const reborn = await mallory('PUT', '/v1/default/config/reborn', { permissions: { mallory: ALL } })
    expect(reborn.status).toBe(201)
    expect(reborn.body.version).toBe(3)
    // The old life's versions are neither readable nor restorable: no old secret, grant or rule comes back.
    const history = await mallory('GET', '/v1/default/config/reborn/history')
    expect(history.body.map((entry: { version: number }) => entry.version)).toEqual([3])
    const v1 = await mallory('GET', '/v1/default/config/reborn/version/1')
    expect(v1.status).toBe(404)
    const rollback = await mallory('PUT', '/v1/default/config/reborn/version/1')
    expect(rollback.status).toBe(404)
    expect(rollback.body.code).toBe('version_not_found')
    const now = await mallory('GET', '/v1/default/config/reborn')
    expect(now.body).toMatchObject({ version: 3, upstreams: [], permissions: { mallory: ALL } })
    expect((await mallory('GET', '/v1/default/config/reborn/version/3')).status).toBe(200)
  })

  it('counts namespace-level fw:* grants as held on the source of a clone', async () => {
    const cloners = { id: 'team-cloners', name: 'Cloners', permissions: ['fw:clone', 'fw:access', 'fw:read'] }
    expect((await owner('POST', '/v1/default/teams', cloners)).status).toBe(201)
    expect((await owner('POST', '/v1/default/teams/team-cloners/members', { userId: 'cloner' })).status).toBe(201)
    const permissions = { everybody: ['fw:access'], 'team-devs': ['fw:read'] }
    const source = await owner('PUT', '/v1/default/config/wide', { permissions })
    expect(source.status).toBe(201)
    const res = await cloner('POST', '/v1/default/config/wide/clone', { id: 'wide-copy' })
    expect(res.status).toBe(201)
    expect(res.body.permissions).toEqual({ everybody: ['fw:access'], 'team-devs': ['fw:read'] })
  })
})
