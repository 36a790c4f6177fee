import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { waitFor } from '../support/wait-for'

/**
 * Issue 24: a client that aborts in the middle of its body was logged at error level and audited
 * as a 500. It is the client's doing: the access line says 499 (client closed request), no
 * error-level line is written, and the API audits the attempt as a failure with status 499.
 */

let server: RunningServer
let owner: Api
let token: string

beforeAll(async () => {
  server = await startServer({ LOG_LEVEL: 'info' })
  token = bootstrapToken(server)
  owner = apiClient(server.url, token)
  const created = await owner('PUT', '/v1/default/config/npm-abort', {
    ecosystem: 'npm',
    upstreams: [{ id: 'public', endpoint: 'https://registry.npmjs.org' }],
  })
  expect([200, 201]).toContain(created.status)
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

/**
 * Sends the headers (announcing 100,000 bytes) and a few bytes of body once the server took the
 * request (100 Continue), then closes the connection.
 */
function abortMidBody(method: string, path: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${server.url}${path}`, {
      method,
      headers: { ...headers, 'content-length': '100000', expect: '100-continue' },
    })
    req.on('error', () => resolve())
    req.on('close', () => resolve())
    req.on('continue', () => req.write('{"ecosystem":', () => req.destroy()))
  })
}

type LogLine = { level: string; msg: string; status?: number; route?: string }
const logLines = (): LogLine[] =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)

describe('a client that closes the request mid-body', () => {
  it('on the API: access line 499, no error-level line, audited as a failure with status 499', async () => {
    await abortMidBody('PUT', '/v1/default/config/fw-abort', {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
    })
    let entry: { statusCode: number; outcome: string } | undefined
    await waitFor(
      async () => {
        const audit = await owner('GET', '/v1/default/audit?limit=50')
        entry = audit.body.find((e: { requestPath?: string }) => e.requestPath === '/v1/default/config/fw-abort')
        return entry !== undefined
      },
      10_000,
      'the audit entry of the aborted call',
    )
    expect(entry).toMatchObject({ statusCode: 499, outcome: 'failure' })
    await waitFor(
      () =>
        logLines().some(
          (line) => line.msg === 'request' && line.route === '/v1/{ns}/config/{fw}' && line.status === 499,
        ),
      10_000,
      'the access line',
    )
    expect(logLines().filter((line) => line.level === 'error')).toEqual([])
    // Nothing was changed by it.
    expect((await owner('GET', '/v1/default/config/fw-abort')).status).toBe(404)
  })

  it('on the registry: access line 499, no error-level line', async () => {
    await abortMidBody('PUT', '/registry/default/npm-abort/left-pad', {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
    })
    await waitFor(
      () =>
        logLines().some(
          (line) => line.msg === 'request' && line.route?.startsWith('/registry/') && line.status === 499,
        ),
      10_000,
      'the access line',
    )
    expect(logLines().filter((line) => line.level === 'error')).toEqual([])
  })
})
