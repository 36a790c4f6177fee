import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type RunningServer } from '../support/server'
import { redisUrl, uniquePrefix } from '../support/redis'
import { readEvents } from '../support/events'
import { createUser } from '../support/admin'

const TOKEN = 'fwp_concurrencyTestToken000000000000000001'

describe('two server processes sharing one Redis', () => {
  let servers: RunningServer[] = []
  beforeAll(async () => {
    const env = { REDIS_URL: await redisUrl(), REDIS_PREFIX: uniquePrefix('conc'), BOOTSTRAP_TOKEN: TOKEN }
    servers = await Promise.all([startServer(env), startServer(env)])
  })
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
  })

  it('bootstraps once and both processes see the same data', async () => {
    const [a, b] = servers.map((s) => apiClient(s.url, TOKEN))
    expect((await a('PUT', '/v1/default/config/shared', {})).status).toBe(201)
    const seen = await b('GET', '/v1/default/config/shared')
    expect(seen.status).toBe(200)
    expect(seen.body.version).toBe(1)
  })

  it('a token revoked through one process is refused at once by both (the revocation is announced)', async () => {
    const [a] = servers.map((s) => apiClient(s.url, TOKEN))
    const created = await a('POST', '/v1/default/tokens/service', { name: 'revoked-ci', permissions: ['fw:read'] })
    expect(created.status).toBe(201)
    const [viaA, viaB] = servers.map((s) => apiClient(s.url, created.body.token))
    // Both processes have authenticated it (and may reuse that lookup for up to 1 s).
    expect((await viaA('GET', '/v1/default/config')).status).toBe(200)
    expect((await viaB('GET', '/v1/default/config')).status).toBe(200)
    expect((await viaB('GET', '/v1/default/config')).status).toBe(200)
    expect((await a('DELETE', `/v1/default/tokens/${created.body.id}`)).status).toBe(204)
    expect((await viaA('GET', '/v1/default/config')).status).toBe(401)
    expect((await viaB('GET', '/v1/default/config')).status).toBe(401)
  })

  it('50 parallel rule upserts over both processes give 50 distinct consecutive versions', async () => {
    const clients = servers.map((s) => apiClient(s.url, TOKEN))
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        clients[i % 2]('PUT', `/v1/default/config/shared/rules/r${i}`, {
          executionPhase: 'download',
          selector: { function: { name: 'packageName', patterns: [`p${i}-*`] } },
        }),
      ),
    )
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(201))
    const versions = results.map((r) => r.body.version).sort((x, y) => x - y)
    expect(versions).toEqual(Array.from({ length: 50 }, (_, i) => i + 2))
    const final = await clients[0]('GET', '/v1/default/config/shared')
    expect(final.body.version).toBe(51)
    expect(final.body.rules).toHaveLength(50)
    const history = await clients[1]('GET', '/v1/default/config/shared/history')
    expect(history.body.map((h: any) => h.version)).toEqual(Array.from({ length: 51 }, (_, i) => 51 - i))
    const events = (await readEvents(servers[0])).filter((e) => e.type === 'config.firewall.updated')
    expect(events.map((e) => (e.data as any).version).sort((x: number, y: number) => x - y)).toEqual(versions)
  })

  // After the upserts: its events must not mix with theirs.
  it('a firewall written through one process is read through the other at once, every time', async () => {
    const [a, b] = servers.map((s) => apiClient(s.url, TOKEN))
    expect((await a('PUT', '/v1/default/config/read-your-writes', {})).status).toBe(201)
    // Both processes keep the namespace's write stamp between writes.
    expect((await b('GET', '/v1/default/config/read-your-writes')).body.version).toBe(1)
    expect((await b('GET', '/v1/default/config')).status).toBe(200)
    for (let i = 0; i < 20; i++) {
      const [writer, reader] = i % 2 ? [b, a] : [a, b]
      const put = await writer('PUT', '/v1/default/config/read-your-writes', { description: `v${i}` })
      expect(put.status).toBe(200)
      const got = await reader('GET', '/v1/default/config/read-your-writes')
      expect([got.body.version, got.body.description]).toEqual([put.body.version, `v${i}`])
      const listed = (await reader('GET', '/v1/default/config')).body.find((fw: any) => fw.id === 'read-your-writes')
      expect(listed.version).toBe(put.body.version)
    }
  })

  // The list and the firewall are answered from kept bodies per caller's permissions (#27): a change
  // of who sees what, through the other process, must count on the very next call.
  it('a team or permission change through one process changes what the other answers at once', async () => {
    const [a] = servers.map((s) => apiClient(s.url, TOKEN))
    // The user reads through the other process (B) from the start.
    const userB = apiClient(servers[1].url, await createUser(servers[0], 'vis-user-b'))
    expect((await a('POST', '/v1/default/teams', { id: 'team-vis', name: 'Visibility' })).status).toBe(201)
    expect((await a('POST', '/v1/default/teams/team-vis/members', { userId: 'vis-user-b' })).status).toBe(201)
    expect(
      (await a('PUT', '/v1/default/config/team-visible', { permissions: { 'team-vis': ['fw:read'] } })).status,
    ).toBe(201)
    const sees = async () => {
      const listed = await userB('GET', '/v1/default/config')
      const got = await userB('GET', '/v1/default/config/team-visible')
      expect(listed.status).toBe(200)
      return [listed.body.some((fw: any) => fw.id === 'team-visible'), got.status]
    }
    // Read twice: the second call answers from what the first kept.
    expect(await sees()).toEqual([true, 200])
    expect(await sees()).toEqual([true, 200])
    expect((await a('DELETE', '/v1/default/teams/team-vis/members/vis-user-b')).status).toBe(204)
    expect(await sees()).toEqual([false, 404])
    expect((await a('POST', '/v1/default/teams/team-vis/members', { userId: 'vis-user-b' })).status).toBe(201)
    expect(await sees()).toEqual([true, 200])
    expect(await sees()).toEqual([true, 200])
    expect((await a('PUT', '/v1/default/config/team-visible', { permissions: {} })).status).toBe(200)
    expect(await sees()).toEqual([false, 404])
    expect(
      (await a('PUT', '/v1/default/config/team-visible', { permissions: { 'vis-user-b': ['fw:read'] } })).status,
    ).toBe(200)
    expect(await sees()).toEqual([true, 200])
  })
})
