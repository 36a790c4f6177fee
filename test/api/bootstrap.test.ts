import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { apiClient, bootstrapToken, startServer, type RunningServer } from '../support/server'
import { adminCli } from '../support/admin'
import { redisUrl, uniquePrefix } from '../support/redis'

describe('bootstrap and the admin CLI', () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(async () => {
    await server.stop()
  })

  it('generates a token, prints it once and writes it with mode 0600', async () => {
    const token = bootstrapToken(server)
    expect(token).toMatch(/^fwp_[A-Za-z0-9]{40,}$/)
    expect(statSync(join(server.env.DATA_DIR, 'bootstrap-token')).mode & 0o777).toBe(0o600)
    expect(server.output().split(token).length - 1).toBe(1)
    expect((await apiClient(server.url, token)('GET', '/v1/default/config')).body).toEqual([])
  })

  it('creates namespaces and users while the service runs, and the service sees them at once', async () => {
    const ownerToken = await adminCli(server, 'create-namespace', '--namespace', 'team-b', '--user', 'bea')
    expect(ownerToken).toMatch(/^fwp_/)
    const bea = apiClient(server.url, ownerToken)
    expect((await bea('GET', '/v1/team-b/me')).body.principal).toEqual({ type: 'user', id: 'bea' })
    expect((await bea('GET', '/v1/default/config')).status).toBe(401)
    const memberToken = await adminCli(server, 'create-user', '--namespace', 'team-b', '--user', 'ben')
    const ben = apiClient(server.url, memberToken)
    expect((await ben('GET', '/v1/team-b/me')).body).toEqual({
      principal: { type: 'user', id: 'ben' },
      teams: [],
      permissions: [],
    })
    expect((await ben('PUT', '/v1/team-b/config/x', {})).status).toBe(403)
  })

  it('uses BOOTSTRAP_TOKEN, BOOTSTRAP_NAMESPACE and BOOTSTRAP_USER exactly, in Redis', async () => {
    const prefix = uniquePrefix('boot')
    const other = await startServer({
      REDIS_URL: await redisUrl(),
      REDIS_PREFIX: prefix,
      BOOTSTRAP_TOKEN: 'my-operator-token-123',
      BOOTSTRAP_NAMESPACE: 'acme',
      BOOTSTRAP_USER: 'root',
    })
    try {
      const api = apiClient(other.url, 'my-operator-token-123')
      expect((await api('GET', '/v1/acme/me')).body).toMatchObject({
        principal: { type: 'user', id: 'root' },
        permissions: ['ns:admin'],
      })
      expect((await api('PUT', '/v1/acme/config/in-redis', {})).status).toBe(201)
      const token = await adminCli(other, 'create-user', '--namespace', 'acme', '--user', 'cli-user')
      expect((await apiClient(other.url, token)('GET', '/v1/acme/me')).status).toBe(200)
    } finally {
      await other.stop()
    }
  })

  it('exits 0 on SIGTERM', async () => {
    const short = await startServer()
    expect(await short.stop('SIGTERM')).toBe(0)
  })
})
