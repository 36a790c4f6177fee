import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { readEvents } from '../support/events'

const upstream = {
  id: 'npmjs',
  endpoint: 'https://registry.npmjs.org',
  credentials: { username: 'ci', password: 'pw-secret-1' },
}
const rule = (id: string, patterns = ['evil-*']) => ({
  id,
  executionPhase: 'download',
  selector: { function: { name: 'packageName', patterns } },
  ruleEffect: { block: true, log: true },
  description: `rule ${id}`,
})

describe('firewall configuration API', () => {
  let server: RunningServer
  let api: Api
  beforeAll(async () => {
    server = await startServer()
    api = apiClient(server.url, bootstrapToken(server))
  })
  afterAll(async () => {
    await server.stop()
  })

  it('lists nothing on a fresh namespace', async () => {
    const res = await api('GET', '/v1/default/config')
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
  })

  it('creates with 201, Location and ETag, and redacts credentials', async () => {
    const res = await api('PUT', '/v1/default/config/web', { name: 'Web', upstreams: [upstream], rules: [rule('r1')] })
    expect(res.status).toBe(201)
    expect(res.headers.get('location')).toBe('/v1/default/config/web')
    expect(res.headers.get('etag')).toBe('"1"')
    expect(res.body).toMatchObject({ id: 'web', version: 1, ecosystem: 'npm', name: 'Web' })
    expect(res.body.upstreams[0].credentials).toEqual({ username: '[REDACTED]', password: '[REDACTED]' })
  })

  it('bumps the version on each change and lists the history newest first', async () => {
    const put = await api('PUT', '/v1/default/config/web/rules/r2', rule('r2', ['bad-*']))
    expect(put.status).toBe(201)
    expect(put.body.version).toBe(2)
    const replaced = await api('PUT', '/v1/default/config/web/rules/r2', rule('r2', ['worse-*']))
    expect(replaced.status).toBe(200)
    expect(replaced.body.version).toBe(3)
    const history = await api('GET', '/v1/default/config/web/history')
    expect(history.body.map((h: any) => h.version)).toEqual([3, 2, 1])
    expect(history.body[0]).toMatchObject({ summary: 'rule r2 changed', actor: { userId: 'owner' } })
    expect(history.body[0].updatedAt).toMatch(/Z$/)
  })

  it('keeps the stored secret when a PUT carries the placeholder back', async () => {
    const current = await api('GET', '/v1/default/config/web')
    const res = await api('PUT', '/v1/default/config/web', { ...current.body, description: 'changed' })
    expect(res.status).toBe(200)
    const v = res.body.version
    const old = await api('GET', `/v1/default/config/web/version/${v - 1}`)
    expect(old.body.upstreams[0].credentials.password).toBe('[REDACTED]')
    const events = await readEvents(server)
    expect(JSON.stringify(events)).not.toContain('pw-secret-1')
  })

  it('refuses a stale If-Match with 412 and accepts the current one', async () => {
    const current = await api('GET', '/v1/default/config/web')
    const etag = current.headers.get('etag')!
    const stale = await api('PUT', '/v1/default/config/web/rules/r3', rule('r3'), { 'if-match': '"1"' })
    expect(stale.status).toBe(412)
    expect(stale.body.code).toBe('version_mismatch')
    const fresh = await api('PUT', '/v1/default/config/web/rules/r3', rule('r3'), { 'if-match': etag })
    expect(fresh.status).toBe(201)
    expect(fresh.headers.get('etag')).toBe(`"${Number(etag.replace(/"/g, '')) + 1}"`)
  })

  it('rolls back to an old version as a new version', async () => {
    const before = await api('GET', '/v1/default/config/web')
    const res = await api('PUT', '/v1/default/config/web/version/1')
    expect(res.status).toBe(200)
    expect(res.body.version).toBe(before.body.version + 1)
    expect(res.body.rules.map((r: any) => r.id)).toEqual(['r1'])
    const history = await api('GET', '/v1/default/config/web/history?limit=1')
    expect(history.body[0].summary).toMatch(/^rolled back to version 1/)
    expect(history.headers.get('link')).toContain('rel="next"')
  })

  it('upserts and deletes exceptions, refusing ones for unknown rules', async () => {
    const exception = {
      rule: 'r1',
      selector: { packageName: 'evil-pkg', version: '1.0.0' },
      reason: 'false_positive',
      expires: '2030-01-01T00:00:00Z',
    }
    const bad = await api('PUT', '/v1/default/config/web/exceptions/e0', { ...exception, rule: 'nope' })
    expect(bad.status).toBe(400)
    const created = await api('PUT', '/v1/default/config/web/exceptions/e1', exception)
    expect(created.status).toBe(201)
    expect(created.body.exceptions).toEqual([{ id: 'e1', log: true, ...exception }])
    const deleted = await api('DELETE', '/v1/default/config/web/exceptions/e1')
    expect(deleted.status).toBe(204)
    expect((await api('GET', '/v1/default/config/web')).body.exceptions).toEqual([])
  })

  it('sets upstream and artifact credentials without ever showing them', async () => {
    const res = await api('PUT', '/v1/default/config/web/upstreams/npmjs/credentials', { token: 'tok-secret-2' })
    expect(res.status).toBe(200)
    expect(res.body.upstreams[0].credentials).toEqual({ token: '[REDACTED]' })
    const art = await api('PUT', '/v1/default/config/web/upstreams/npmjs/artifact-credentials/cdn.example.com', {
      token: 'art-secret-3',
    })
    expect(art.status).toBe(200)
    expect(art.body.upstreams[0].artifactCredentials).toEqual([
      { host: 'cdn.example.com', credentials: { token: '[REDACTED]' } },
    ])
    const history = await api('GET', '/v1/default/config/web/history')
    expect(history.body[0].summary).toContain('artifact credentials')
  })

  it('clones a firewall to version 1 and refuses a duplicate id', async () => {
    const res = await api('POST', '/v1/default/config/web/clone', { id: 'web-copy' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ id: 'web-copy', version: 1, name: 'Web (copy)' })
    const again = await api('POST', '/v1/default/config/web/clone', { id: 'web-copy' })
    expect(again.status).toBe(409)
  })

  it('validates extends: unknown base, cycle', async () => {
    const unknown = await api('PUT', '/v1/default/config/child', { extends: ['missing'] })
    expect(unknown.status).toBe(400)
    expect(unknown.body.errors[0].path).toBe('extends[0]')
    expect((await api('PUT', '/v1/default/config/child', { extends: ['web'] })).status).toBe(201)
    const cycle = await api('PUT', '/v1/default/config/web', {
      ...(await api('GET', '/v1/default/config/web')).body,
      extends: ['child'],
    })
    expect(cycle.status).toBe(400)
  })

  it('emits one config.firewall event per change with the redacted config and actor', async () => {
    const res = await api('DELETE', '/v1/default/config/child')
    expect(res.status).toBe(204)
    expect((await api('GET', '/v1/default/config/child')).status).toBe(404)
    const events = (await readEvents(server)).filter((e) => e.type.startsWith('config.firewall.'))
    const web = events.filter((e) => (e.data as any).firewall === 'web')
    const latest = (await api('GET', '/v1/default/config/web')).body.version
    expect(web.map((e) => (e.data as any).version)).toEqual(Array.from({ length: latest }, (_, i) => i + 1))
    expect(web[0].type).toBe('config.firewall.created')
    const deleted = events.find((e) => e.type === 'config.firewall.deleted')!
    expect(deleted.data).toMatchObject({ firewall: 'child', ecosystem: 'npm', actor: { userId: 'owner' } })
    expect(deleted.id).toMatch(/^evt-/)
    expect(deleted.time).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/)
  })

  it('records audit entries for successes and failures', async () => {
    await api('PUT', '/v1/default/config/web/rules/bad id', rule('x'))
    const audit = await api('GET', '/v1/default/audit?limit=500')
    expect(audit.status).toBe(200)
    const actions = audit.body.map((a: any) => `${a.action}:${a.outcome}`)
    expect(actions).toContain('firewall.rule.upsert:success')
    expect(actions).toContain('firewall.rule.upsert:failure')
    const failure = audit.body.find((a: any) => a.outcome === 'failure')
    expect(failure).toMatchObject({ statusCode: 400, requestMethod: 'PUT', actorUserId: 'owner' })
    expect(failure.actorTokenIdentifier).toMatch(/^tid_/)
  })

  it('serves an OpenAPI 3.1 document that describes every operation', async () => {
    const res = await fetch(`${server.url}/v1/openapi.json`)
    const doc = await res.json()
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.paths['/v1/{ns}/config/{fw}'].put.requestBody).toBeDefined()
    expect(JSON.stringify(doc)).not.toContain('#/$defs/')
  })
})
