import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { backendOf } from '../support/events'
import { createUser } from '../support/admin'
import { keys } from '../../storage/repositories/keys'

/** Entries as the proxy writes them (the proxy's own tests cover how they are made). */
const entry = (i: number, blocked: boolean) => ({
  id: `evt-${String(i).padStart(4, '0')}`,
  time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
  firewall: 'fw',
  firewallVersion: 1,
  executionPhase: 'download',
  blocked,
  outcome: blocked ? 'blocked' : 'allowed',
  ecosystem: 'npm',
  packageName: i % 2 ? 'left-pad' : 'lodash',
  version: '1.0.0',
  upstream: 'npmjs',
  user: 'owner',
  request: `req-${i}`,
  message: blocked ? 'blocked' : 'no rule matched',
  ...(blocked ? { rule: 'r1' } : {}),
})

describe('GET /v1/{ns}/config/{fw}/log', () => {
  let server: RunningServer
  let api: Api
  beforeAll(async () => {
    server = await startServer()
    api = apiClient(server.url, bootstrapToken(server))
    expect((await api('PUT', '/v1/default/config/fw', { permissions: { reader: ['fw:access'] } })).status).toBe(201)
    const backend = await backendOf(server)
    await backend.logs.append(
      keys.firewallLog('default', 'fw'),
      Array.from({ length: 30 }, (_, i) => entry(i, i % 3 === 0)),
    )
    await backend.close()
  })
  afterAll(async () => {
    await server.stop()
  })

  it('answers newest first with a Link to the next page', async () => {
    const first = await api('GET', '/v1/default/config/fw/log?limit=10')
    expect(first.status).toBe(200)
    expect(first.body.map((e: any) => e.request)).toEqual(Array.from({ length: 10 }, (_, i) => `req-${29 - i}`))
    const link = first.headers.get('link')!
    const next = /<([^>]+)>; rel="next"/.exec(link)![1]
    const second = await api('GET', next)
    expect(second.body[0].request).toBe('req-19')
  })

  it('filters by blocked, packageName and time window', async () => {
    const blocked = await api('GET', '/v1/default/config/fw/log?blocked=true&limit=100')
    expect(blocked.body).toHaveLength(10)
    expect(blocked.body.every((e: any) => e.blocked && e.rule === 'r1')).toBe(true)
    const named = await api('GET', '/v1/default/config/fw/log?packageName=left-pad&blocked=false&limit=100')
    expect(named.body.every((e: any) => e.packageName === 'left-pad' && !e.blocked)).toBe(true)
    const window = await api(
      'GET',
      `/v1/default/config/fw/log?since=${encodeURIComponent('2026-01-01T00:10:00Z')}&until=${encodeURIComponent('2026-01-01T00:15:00Z')}`,
    )
    expect(window.body.map((e: any) => e.request)).toEqual(['req-14', 'req-13', 'req-12', 'req-11', 'req-10'])
  })

  it('finds the entry of one request id (what a block message quotes)', async () => {
    const found = await api('GET', '/v1/default/config/fw/log?requestId=req-7')
    expect(found.status).toBe(200)
    expect(found.body).toMatchObject([{ request: 'req-7', packageName: 'left-pad' }])
    expect((await api('GET', '/v1/default/config/fw/log?requestId=req-7&blocked=true')).body).toEqual([])
    expect((await api('GET', '/v1/default/config/fw/log?requestId=req-none')).body).toEqual([])
    expect((await api('GET', `/v1/default/config/fw/log?requestId=${'x'.repeat(201)}`)).status).toBe(400)
    const openapi = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as any
    const params = openapi.paths['/v1/{ns}/config/{fw}/log'].get.parameters.map((p: any) => p.name)
    expect(params).toContain('requestId')
  })

  it('needs fw:read and validates its parameters', async () => {
    const reader = apiClient(server.url, await createUser(server, 'reader'))
    const refused = await reader('GET', '/v1/default/config/fw/log')
    expect(refused.status).toBe(403)
    expect(refused.body.permission).toBe('fw:read')
    expect((await api('GET', '/v1/default/config/fw/log?blocked=maybe')).status).toBe(400)
    expect((await api('GET', '/v1/default/config/nope/log')).status).toBe(404)
  })
})
