import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isDirectApiPath } from '../../server/http/api-direct'
import { startServer, type RunningServer } from '../support/server'

const TOKEN = 'fwp_directDispatchTestToken0123456789abcdef'

describe('isDirectApiPath', () => {
  it('takes the paths Nitro routes to the /v1/** route file unchanged', () => {
    for (const url of ['/v1/default/config', '/v1/default/config/fw-1?x=1', '/v1/openapi.json/x', '/v1/openapi.json//'])
      expect(isDirectApiPath(url), url).toBe(true)
  })

  it('leaves Nitro the paths it routes elsewhere or decodes: /v1, openapi.json, percent-escapes, other areas', () => {
    for (const url of [
      undefined,
      '/v1',
      '/v1/openapi.json',
      '/v1/openapi.json/',
      '/v1/openapi.json?download=1',
      '/v1/default/config/fw%2D1',
      '/v1/openapi%2Ejson',
      '/v1x/default',
      '/healthz',
      '/registry/default/fw/left-pad',
      'http://host/v1/default/config',
    ])
      expect(isDirectApiPath(url), String(url)).toBe(false)
  })
})

/** Status, headers and body of an answer, less what differs per response (date, request id, the rate count). */
async function answer(response: Response) {
  const headers = Object.fromEntries(
    [...response.headers].filter(
      ([name]) => !['date', 'x-request-id', 'keep-alive', 'ratelimit-remaining', 'ratelimit-reset'].includes(name),
    ),
  )
  return {
    status: response.status,
    headers,
    body: (await response.text()).replace(/urn:request:[\w-]+/, 'urn:request:*'),
  }
}

describe('API calls answered directly and through Nitro', () => {
  let server: RunningServer
  const call = (method: string, path: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
    fetch(server.url + path, { method, headers })

  beforeAll(async () => {
    server = await startServer({ BOOTSTRAP_TOKEN: TOKEN, LOG_LEVEL: 'info', LOG_FORMAT: 'json' })
    const put = await fetch(`${server.url}/v1/default/config/fw-1`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(put.status).toBe(201)
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('answers the same: a read, a list, a missing firewall, no operation, a wrong method, no token, HEAD', async () => {
    // `%2D` is `-`: h3 decodes it, so the second path names the same firewall but takes Nitro's way.
    const pairs: [string, string, string, Record<string, string>?][] = [
      ['GET', '/v1/default/config/fw-1', '/v1/default/config/fw%2D1'],
      ['GET', '/v1/default/config', '/v1/default/confi%67'],
      ['GET', '/v1/default/config/fw-9', '/v1/default/config/fw%2D9'],
      ['GET', '/v1/default/no/such/operation', '/v1/default/no/such/operatio%6E'],
      ['PATCH', '/v1/default/config/fw-1', '/v1/default/config/fw%2D1'],
      ['GET', '/v1/default/config/fw-1', '/v1/default/config/fw%2D1', {}],
      ['HEAD', '/v1/default/config/fw-1', '/v1/default/config/fw%2D1'],
    ]
    for (const [method, direct, routed, headers] of pairs) {
      const [a, b] = [
        await answer(await call(method, direct, headers)),
        await answer(await call(method, routed, headers)),
      ]
      expect(a, `${method} ${direct}`).toEqual(b)
    }
    expect((await call('GET', '/v1/default/config/fw-1')).headers.get('etag')).toBeTruthy()
  })

  it('runs inside the request context: the access line has the route template and the answer’s request id', async () => {
    const response = await call('GET', '/v1/default/config/fw-1')
    await response.text()
    const requestId = response.headers.get('x-request-id')
    expect(requestId).toMatch(/^req/)
    // The access line is written when the response closes: wait for it in the output.
    let line: Record<string, unknown> | undefined
    while (!line) {
      line = server
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as Record<string, unknown>)
        .find((entry) => entry.msg === 'request' && entry.requestId === requestId)
      if (!line) await new Promise((resolve) => setImmediate(resolve))
    }
    expect(line).toMatchObject({ route: '/v1/{ns}/config/{fw}', method: 'GET', status: 200 })
  })
})
