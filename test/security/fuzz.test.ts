import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'

/**
 * Every operation of the OpenAPI document, called with random and boundary input: odd ids (built-in
 * property names, encoded separators, dot segments, broken escapes, over-long), random query strings
 * and bodies (random JSON, and objects with the schema's own property names holding wrong values).
 * The service must never answer 5xx, must stay alive, and the namespace must stay usable.
 */
interface OpenApiOperation {
  method: string
  path: string
  properties: string[]
  queryNames: string[]
}

const ODD_IDS = [
  'constructor',
  '__proto__',
  'valueOf',
  'toString',
  'hasOwnProperty',
  'prototype',
  'default',
  'fw-1',
  '%2F',
  'a%2Fb',
  'a%5Cb',
  '..',
  '%2E%2E',
  '.',
  '%00',
  '%E0%A4%A',
  '%',
  'a:b',
  'ns%3Adefault%3Ameta',
  '*',
  'x'.repeat(129),
  'x'.repeat(5000),
  '%F0%9F%92%A9',
  'whdel-00000000',
  'exr-0',
  'tok-0',
  '-',
  '0',
  '1e309',
]

const oddId = fc.oneof(fc.constantFrom(...ODD_IDS), fc.string({ maxLength: 40 }).map(encodeURIComponent))

const boundaryValue = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    '[REDACTED]',
    '*',
    '__proto__',
  ),
  fc.constantFrom(
    'x'.repeat(300),
    '\u0000',
    '\ud800',
    '2026-13-45T99:99:99Z',
    'http://169.254.169.254/',
    'javascript:x',
  ),
  fc.jsonValue({ maxDepth: 4 }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
)

function bodyFor(operation: OpenApiOperation) {
  const shaped = fc.dictionary(
    operation.properties.length ? fc.constantFrom(...operation.properties, '__proto__', 'constructor') : fc.string(),
    boundaryValue,
    { maxKeys: 6 },
  )
  return fc.oneof(
    fc.constant(undefined),
    fc.jsonValue({ maxDepth: 5 }).map((value) => JSON.stringify(value)),
    shaped.map((value) => JSON.stringify(value)),
    fc.constantFrom(
      '{',
      '{"a":',
      '\u0000',
      '{"__proto__":{"admin":true}}',
      '[]',
      '"str"',
      'null',
      '{}',
      '{"constructor":{"prototype":{}}}',
    ),
  )
}

function queryFor(operation: OpenApiOperation) {
  const names = [...operation.queryNames, 'limit', 'cursor', '__proto__']
  return fc
    .dictionary(
      fc.constantFrom(...names),
      fc.oneof(fc.constantFrom('-1', '0', '1e9', 'NaN', '', '%', '../x', 'true'), fc.string({ maxLength: 20 })),
      { maxKeys: 3 },
    )
    .map((entries) => new URLSearchParams(entries).toString())
}

describe('fuzzing every operation of the OpenAPI document', () => {
  let server: RunningServer
  let owner: Api
  let operations: OpenApiOperation[] = []
  beforeAll(async () => {
    server = await startServer({ AUTH_FAILURE_RATE_LIMIT: 'off', API_RATE_LIMIT: 'off', UPSTREAM_ALLOWED_NETWORKS: '' })
    owner = apiClient(server.url, bootstrapToken(server))
    const document = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; in: string }[]
            requestBody?: { content: Record<string, { schema: { properties?: object } }> }
          }
        >
      >
    }
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, spec] of Object.entries(methods)) {
        const schema = spec.requestBody?.content['application/json']?.schema
        operations.push({
          method: method.toUpperCase(),
          path,
          properties: Object.keys(schema?.properties ?? {}),
          queryNames: (spec.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        })
      }
    }
    operations = operations.filter((op) => op.path.startsWith('/v1/{ns}'))
    expect(operations.length).toBeGreaterThan(40)
  }, 60_000)
  afterAll(async () => {
    await server.stop()
  })

  it('never answers 5xx, stays alive, and leaves the namespace usable', async () => {
    const token = bootstrapToken(server)
    const failures: string[] = []
    for (const operation of operations) {
      const params = operation.path.match(/\{(\w+)\}/g)?.filter((p) => p !== '{ns}') ?? []
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(...params.map(() => oddId)),
          fc.oneof(fc.constant('default'), oddId),
          queryFor(operation),
          bodyFor(operation),
          fc.constantFrom(token, `${token}~fuzz`, 'fwp_short', ''),
          async (ids, ns, query, body, presented) => {
            let path = operation.path.replace('{ns}', ns)
            params.forEach((param, i) => (path = path.replace(param, ids[i])))
            const response = await fetch(`${server.url}${path}${query ? `?${query}` : ''}`, {
              method: operation.method,
              headers: {
                authorization: `Bearer ${presented}`,
                ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
              },
              body: operation.method === 'GET' ? undefined : body,
            })
            const text = await response.text()
            if (response.status >= 500)
              failures.push(`${operation.method} ${path} -> ${response.status} ${text.slice(0, 200)}`)
            return response.status < 500
          },
        ),
        { numRuns: 12, seed: 20261123 },
      )
    }
    expect(failures).toEqual([])
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    expect((await owner('GET', '/v1/default/me')).status).toBe(200)
    expect((await owner('GET', '/v1/default/config')).status).toBe(200)
    expect((await owner('GET', '/v1/default/teams')).status).toBe(200)
    expect((await owner('GET', '/v1/default/license-sets')).status).toBe(200)
    expect((await owner('GET', '/v1/default/webhooks')).status).toBe(200)
  }, 300_000)
})
