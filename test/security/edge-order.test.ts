import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { createUser } from '../support/admin'

/**
 * docs/security.md, as an attacker meets it: the order of checks (403/404 before any body
 * validation), a firewall the caller cannot see is invisible on every path below it, encoded
 * separators in path parameters never reach storage, and action bodies.
 */
const rule = {
  executionPhase: 'download',
  selector: { function: { name: 'packageName', patterns: ['x-*'] } },
  description: 'x',
}

describe('order of checks, existence and path parameters', () => {
  let server: RunningServer
  let owner: Api
  let reader: Api
  let outsider: Api
  beforeAll(async () => {
    server = await startServer()
    owner = apiClient(server.url, bootstrapToken(server))
    reader = apiClient(server.url, await createUser(server, 'reader'))
    outsider = apiClient(server.url, await createUser(server, 'outsider'))
    const created = await owner('PUT', '/v1/default/config/secret-fw', {
      upstreams: [{ id: 'up', endpoint: 'https://registry.example.com' }],
      rules: [{ id: 'base', ...rule }],
      exceptions: [{ id: 'ex1', rule: 'base', selector: { packageName: 'x-a' } }],
      permissions: { reader: ['fw:read', 'fw:access'] },
    })
    expect(created.status).toBe(201)
  }, 60_000)
  afterAll(async () => {
    await server.stop()
  })

  it('answers 403 naming the permission before it looks at an invalid body', async () => {
    for (const [method, path] of [
      ['PUT', '/v1/default/config/secret-fw/rules/r1'],
      ['PUT', '/v1/default/config/secret-fw/exceptions/e1'],
      ['PUT', '/v1/default/config/secret-fw/upstreams/up/credentials'],
      ['POST', '/v1/default/config/secret-fw/clone'],
      ['POST', '/v1/default/teams'],
      ['POST', '/v1/default/webhooks'],
      ['POST', '/v1/default/license-sets'],
      ['POST', '/v1/default/tokens/service'],
    ] as const) {
      const res = await reader(method, path, { nonsense: [1, 2, 3] })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body.code).toBe('permission_denied')
      expect(typeof res.body.permission).toBe('string')
    }
  })

  it('answers 404 "firewall not found" on every path below a firewall the caller cannot see, exactly as for a missing one', async () => {
    const paths: [string, string, unknown?][] = [
      ['GET', ''],
      ['GET', '/history'],
      ['GET', '/version/1'],
      ['PUT', '/version/1'],
      ['GET', '/log'],
      ['PUT', '/rules/base', rule],
      ['DELETE', '/rules/base'],
      ['DELETE', '/rules/no-such-rule'],
      ['PUT', '/exceptions/ex1', { rule: 'base', selector: { packageName: 'x' } }],
      ['DELETE', '/exceptions/ex1'],
      ['DELETE', '/exceptions/no-such-exception'],
      ['PUT', '/upstreams/up/credentials', { token: 't' }],
      ['POST', '/clone', { id: 'stolen' }],
      ['GET', '/exception-requests'],
      ['GET', '/exception-requests/exr-none'],
      ['POST', '/exception-requests/exr-none/approve', {}],
      ['POST', '/exception-requests', { nonsense: true }],
      ['DELETE', ''],
    ]
    for (const [method, suffix, body] of paths) {
      const hidden = await outsider(method, `/v1/default/config/secret-fw${suffix}`, body)
      const missing = await outsider(method, `/v1/default/config/no-such-fw${suffix}`, body)
      expect(hidden.status, `${method} ${suffix}`).toBe(404)
      expect(hidden.body.code, `${method} ${suffix}`).toBe('firewall_not_found')
      expect(hidden.body.detail.replace('secret-fw', 'X')).toBe(missing.body.detail.replace('no-such-fw', 'X'))
    }
  })

  it('says "not found, or you have no access to it" for both, in the API and in the registry proxy', async () => {
    const hidden = await outsider('GET', '/v1/default/config/secret-fw')
    const missing = await outsider('GET', '/v1/default/config/no-such-fw')
    for (const [res, id] of [
      [hidden, 'secret-fw'],
      [missing, 'no-such-fw'],
    ] as const) {
      expect(res.status).toBe(404)
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(res.body.code).toBe('firewall_not_found')
      expect(res.body.detail).toBe(`firewall "${id}" was not found, or you have no access to it`)
    }
    // Alike but for the id and the request's own `instance`.
    const alike = (body: Record<string, unknown>, id: string) => ({
      ...body,
      detail: String(body.detail).replace(id, 'X'),
      instance: undefined,
    })
    expect(alike(hidden.body, 'secret-fw')).toEqual(alike(missing.body, 'no-such-fw'))
    // The registry: a first install without a grant is answered like a firewall that is not there.
    const token = await createUser(server, 'newcomer')
    const get = (fw: string) =>
      fetch(`${server.url}/registry/default/${fw}/left-pad`, { headers: { authorization: `Bearer ${token}` } })
    const [proxyHidden, proxyMissing] = await Promise.all([get('secret-fw'), get('no-such-fw')])
    expect(proxyHidden.status).toBe(404)
    expect(proxyMissing.status).toBe(404)
    const [hiddenBody, missingBody] = await Promise.all([proxyHidden.json(), proxyMissing.json()])
    expect(hiddenBody).toEqual({ error: 'firewall "secret-fw" was not found, or you have no access to it' })
    expect(missingBody).toEqual({ error: 'firewall "no-such-fw" was not found, or you have no access to it' })
  })

  it('answers a new `extends` base the caller cannot read exactly like a missing one', async () => {
    expect(
      (
        await owner('POST', '/v1/default/teams', {
          id: 'creators',
          name: 'Creators',
          permissions: ['ns:firewalls:create'],
        })
      ).status,
    ).toBe(201)
    expect((await owner('POST', '/v1/default/teams/creators/members', { userId: 'outsider' })).status).toBe(201)
    const config = (base: string) => ({
      upstreams: [{ id: 'up', endpoint: 'https://registry.example.com' }],
      extends: [base],
    })
    const hidden = await outsider('PUT', '/v1/default/config/borrower', config('secret-fw'))
    const missing = await outsider('PUT', '/v1/default/config/borrower', config('no-such-fw'))
    expect(hidden.status).toBe(400)
    expect(hidden.body.errors).toEqual([{ path: 'extends[0]', message: 'unknown firewall "secret-fw"' }])
    expect(missing.body.errors).toEqual([{ path: 'extends[0]', message: 'unknown firewall "no-such-fw"' }])
    expect((await owner('PUT', '/v1/default/config/borrower', config('secret-fw'))).status).toBe(201)
  })

  it('refuses encoded separators, dot segments and broken escapes in path parameters with 400/404, never 5xx', async () => {
    const attempts = [
      '/v1/a%2Fb/config',
      '/v1/a%5Cb/config',
      '/v1/%2E%2E/config',
      '/v1/default%2F..%2Fother/config',
      '/v1/%E0%A4%A/config',
      '/v1/default/config/a%2Fb',
      '/v1/default/config/..%2F..%2Fns%3Adefault%3Ameta',
      '/v1/default/config/%2e%2e',
      '/v1/default/config/secret-fw/rules/a%5Cb',
      '/v1/default/teams/%2F',
      '/v1/default/webhooks/a%2F..%2Fb',
      '/registry/a%2Fb/fw/left-pad',
      '/registry/default/a%2Fb/left-pad',
      '/registry/%E0%A4%A/fw/x',
      '/namespaces/a%2Fb/firewalls',
      '/namespaces/default/firewalls/a%2Fb',
    ]
    for (const path of attempts) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await fetch(server.url + path, {
          method,
          headers: { authorization: `Bearer ${bootstrapToken(server)}`, 'content-type': 'application/json' },
          body: method === 'PUT' ? '{}' : undefined,
          redirect: 'manual',
        })
        await res.arrayBuffer()
        expect(res.status, `${method} ${path}`).toBeLessThan(500)
      }
    }
    expect((await owner('GET', '/v1/default/config/secret-fw')).status).toBe(200)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  })

  it('records the new id as resourceId of a successful create', async () => {
    const team = await owner('POST', '/v1/default/teams', { name: 'generated id' })
    expect(team.status).toBe(201)
    const audit = await owner('GET', '/v1/default/audit?action=team.create')
    const entry = audit.body.find((e: { requestId?: string }) => e.requestId === team.headers.get('x-request-id'))
    expect(entry).toMatchObject({ outcome: 'success', resourceType: 'team', resourceId: team.body.id })
  })

  it('takes no body, an empty body or {} on deny, and approves the proposal as is without an exception', async () => {
    const proposal = { id: 'ex-proposed', rule: 'base', selector: { packageName: 'x-proposed' }, reason: 'other' }
    const ask = async () => {
      const res = await reader('POST', '/v1/default/config/secret-fw/exception-requests', {
        proposedException: proposal,
        justification: 'needed',
      })
      expect(res.status).toBe(201)
      return res.body.id as string
    }
    const denied = await ask()
    const res = await fetch(`${server.url}/v1/default/config/secret-fw/exception-requests/${denied}/deny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bootstrapToken(server)}` },
    })
    expect(res.status).toBe(200)
    expect((await res.json()).status).toBe('denied')
    const approved = await owner('POST', `/v1/default/config/secret-fw/exception-requests/${denied}/approve`, {})
    expect(approved.status).toBe(200)
    expect(approved.body.exception).toMatchObject(proposal)
    expect(
      (await owner('GET', '/v1/default/config/secret-fw')).body.exceptions.map((e: { id: string }) => e.id),
    ).toContain('ex-proposed')
  })
})
