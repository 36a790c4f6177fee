import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { createUser } from '../support/admin'
import { backendOf } from '../support/events'
import { issueToken } from '../../server/namespace/tokens'
import { createServices } from '../../server/app/services'

/** Everything a client can change, read back through storage (not the API) to prove nothing moved. */
async function snapshotStorage(server: RunningServer): Promise<string> {
  const backend = await backendOf(server)
  try {
    const keys = (await backend.keyValue.keys('ns')).concat(await backend.keyValue.keys('token')).sort()
    const values = await backend.keyValue.getMany(keys)
    return JSON.stringify(
      keys.map((key, i) => [
        key,
        key.startsWith('token:') ? { ...(values[i] as object), lastUsedAt: null } : values[i],
      ]),
    )
  } finally {
    await backend.close()
  }
}

/** A raw request, so bodies can be bytes that fetch would not send as-is. */
function raw(
  server: RunningServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; type: string; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString()
        resolve({
          status: res.statusCode!,
          type: String(res.headers['content-type']),
          json: text ? JSON.parse(text) : null,
        })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('bad input gets a clear 4xx problem and changes nothing', () => {
  let server: RunningServer
  let token: string
  let api: Api
  let revoked: string
  let expired: string
  beforeAll(async () => {
    server = await startServer()
    token = bootstrapToken(server)
    api = apiClient(server.url, token)
    expect((await api('PUT', '/v1/default/config/fw', { rules: [] })).status).toBe(201)
    revoked = await createUser(server, 'gone')
    const gone = apiClient(server.url, revoked)
    const tokens = await gone('GET', '/v1/default/tokens/personal')
    expect((await gone('DELETE', `/v1/default/tokens/${tokens.body[0].id}`)).status).toBe(204)
    // An expired token written straight to storage (the API refuses past expiry dates).
    const backend = await backendOf(server)
    const issued = await issueToken(createServices(backend), {
      ns: 'default',
      kind: 'personal',
      name: 'old',
      principalId: 'owner',
      createdBy: 'test',
      expiresAt: '2020-01-01T00:00:00.000Z',
    })
    expired = issued.material
    await backend.close()
  })
  afterAll(async () => {
    await server.stop()
  })

  const json = { 'content-type': 'application/json' }
  const auth = () => ({ authorization: `Bearer ${token}` })
  const cases: {
    name: string
    status: number
    code: string
    send: () => Promise<{ status: number; type: string; json: any }>
  }[] = [
    {
      name: 'invalid JSON',
      status: 400,
      code: 'invalid_json',
      send: () => raw(server, 'PUT', '/v1/default/config/fw', { ...auth(), ...json }, Buffer.from('{"rules": [')),
    },
    {
      name: 'invalid UTF-8',
      status: 400,
      code: 'invalid_utf8',
      send: () => raw(server, 'PUT', '/v1/default/config/fw', { ...auth(), ...json }, Buffer.from([0x7b, 0xff, 0x7d])),
    },
    {
      name: 'wrong types',
      status: 400,
      code: 'validation_failed',
      send: () => raw(server, 'PUT', '/v1/default/config/fw', { ...auth(), ...json }, Buffer.from('{"rules":"all"}')),
    },
    {
      name: 'unknown field',
      status: 400,
      code: 'validation_failed',
      send: () => raw(server, 'PUT', '/v1/default/config/fw', { ...auth(), ...json }, Buffer.from('{"rulez":[]}')),
    },
    {
      name: 'missing rule id in body array',
      status: 400,
      code: 'validation_failed',
      send: () =>
        raw(
          server,
          'PUT',
          '/v1/default/config/fw',
          { ...auth(), ...json },
          Buffer.from('{"rules":[{"executionPhase":"download","selector":{"function":{"name":"malware"}}}]}'),
        ),
    },
    {
      name: 'null body on a firewall PUT',
      status: 400,
      code: 'body_not_object',
      send: () => raw(server, 'PUT', '/v1/default/config/fw', { ...auth(), ...json }, Buffer.from('null')),
    },
    {
      name: 'no body on a firewall PUT',
      status: 400,
      code: 'body_required',
      send: () => raw(server, 'PUT', '/v1/default/config/fw', auth()),
    },
    {
      name: 'missing team name',
      status: 400,
      code: 'validation_failed',
      send: () => raw(server, 'POST', '/v1/default/teams', { ...auth(), ...json }, Buffer.from('{}')),
    },
    {
      name: 'bad id characters',
      status: 400,
      code: 'validation_failed',
      send: () => raw(server, 'PUT', '/v1/default/config/bad%24id', { ...auth(), ...json }, Buffer.from('{}')),
    },
    {
      name: 'bad SPDX id',
      status: 400,
      code: 'validation_failed',
      send: () =>
        raw(
          server,
          'POST',
          '/v1/default/license-sets',
          { ...auth(), ...json },
          Buffer.from('{"name":"x","licenses":["NOT-A-LICENSE"]}'),
        ),
    },
    {
      name: '2 MiB body',
      status: 413,
      code: 'body_too_large',
      send: () =>
        raw(server, 'PUT', '/v1/default/config/fw', { ...auth(), ...json }, Buffer.alloc(2 * 1024 * 1024, 0x20)),
    },
    {
      name: 'wrong content type',
      status: 415,
      code: 'unsupported_media_type',
      send: () =>
        raw(server, 'PUT', '/v1/default/config/fw', { ...auth(), 'content-type': 'text/plain' }, Buffer.from('{}')),
    },
    {
      name: 'unknown namespace',
      status: 401,
      code: 'unauthenticated',
      send: () => raw(server, 'GET', '/v1/elsewhere/config', auth()),
    },
    {
      name: 'no token',
      status: 401,
      code: 'unauthenticated',
      send: () => raw(server, 'PUT', '/v1/default/config/fw', json, Buffer.from('{}')),
    },
    {
      name: 'revoked token',
      status: 401,
      code: 'unauthenticated',
      send: () =>
        raw(server, 'PUT', '/v1/default/config/fw', { authorization: `Bearer ${revoked}`, ...json }, Buffer.from('{}')),
    },
    {
      name: 'expired token',
      status: 401,
      code: 'unauthenticated',
      send: () =>
        raw(server, 'PUT', '/v1/default/config/fw', { authorization: `Bearer ${expired}`, ...json }, Buffer.from('{}')),
    },
    {
      name: 'body on an action',
      status: 400,
      code: 'unexpected_body',
      send: () => raw(server, 'PUT', '/v1/default/config/fw/version/1', { ...auth(), ...json }, Buffer.from('{"x":1}')),
    },
    {
      name: 'unknown version',
      status: 404,
      code: 'version_not_found',
      send: () => raw(server, 'PUT', '/v1/default/config/fw/version/99', auth()),
    },
    {
      name: 'unknown route',
      status: 404,
      code: 'route_not_found',
      send: () => raw(server, 'GET', '/v1/default/nothing-here', auth()),
    },
    {
      name: 'unknown license set in a rule',
      status: 400,
      code: 'invalid_reference',
      send: () =>
        raw(
          server,
          'PUT',
          '/v1/default/config/fw/rules/lic',
          { ...auth(), ...json },
          Buffer.from(
            '{"executionPhase":"download","selector":{"function":{"name":"license","licenseSet":"ls-missing","mode":"deny"}}}',
          ),
        ),
    },
    {
      name: 'placeholder with nothing stored',
      status: 400,
      code: 'redacted_without_value',
      send: () =>
        raw(
          server,
          'PUT',
          '/v1/default/config/fw',
          { ...auth(), ...json },
          Buffer.from('{"upstreams":[{"id":"u","endpoint":"https://r.example","credentials":{"token":"[REDACTED]"}}]}'),
        ),
    },
    {
      name: 'changing the ecosystem',
      status: 400,
      code: 'ecosystem_immutable',
      send: () =>
        raw(server, 'PUT', '/v1/default/config/fw', { ...auth(), ...json }, Buffer.from('{"ecosystem":"pypi"}')),
    },
    {
      name: 'expiry in the past',
      status: 400,
      code: 'expiry_in_past',
      send: () =>
        raw(
          server,
          'POST',
          '/v1/default/tokens/personal',
          { ...auth(), ...json },
          Buffer.from('{"name":"x","expiresAt":"2001-01-01T00:00:00Z"}'),
        ),
    },
    {
      name: 'duplicate team id',
      status: 409,
      code: 'team_exists',
      send: async () => (
        await raw(server, 'POST', '/v1/default/teams', { ...auth(), ...json }, Buffer.from('{"id":"dup","name":"d"}')),
        raw(server, 'POST', '/v1/default/teams', { ...auth(), ...json }, Buffer.from('{"id":"dup","name":"d"}'))
      ),
    },
  ]

  for (const testCase of cases) {
    it(`${testCase.name}: ${testCase.status} ${testCase.code}`, async () => {
      const before = testCase.code === 'team_exists' ? null : await snapshotStorage(server)
      const res = await testCase.send()
      expect(res.status).toBe(testCase.status)
      expect(res.type).toContain('application/problem+json')
      expect(res.json).toMatchObject({ status: testCase.status, code: testCase.code })
      expect(typeof res.json.title).toBe('string')
      expect(typeof res.json.detail).toBe('string')
      expect(typeof res.json.type).toBe('string')
      if (before !== null) expect(await snapshotStorage(server)).toBe(before)
    })
  }

  it('lists field errors with paths on validation failures', async () => {
    const res = await api('PUT', '/v1/default/config/fw', {
      rules: [{ id: 'r', executionPhase: 'never', selector: { function: { name: 'malware' } } }],
    })
    expect(res.body.errors).toContainEqual(expect.objectContaining({ path: 'rules[0].executionPhase' }))
  })
})
