import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'

/** Every value planted here must never appear in any log line of the server. */
const PLANTED = {
  bootstrap: 'fwp_plantedBootstrapToken7c1e0b5d9a3f2e8c4b6a',
  metrics: 'planted-metrics-token-41f7a2c9',
  unknownToken: 'fwp_plantedUnknownToken3b9d7e1f5a2c8e4d6b0f',
  upstreamUser: 'planted-upstream-user-5e2a',
  upstreamPassword: 'planted-upstream-password-8d3f',
  upstreamToken: 'planted-upstream-token-1a9c',
  artifactToken: 'planted-artifact-token-6b4e',
  payloadMarker: 'planted-payload-marker-2f7d',
  querySecret: 'planted-query-secret-9e3b',
}

/** A loopback HTTP server that records requests and answers with `reply`. */
async function listen(reply: (url: string, headers: IncomingHttpHeaders) => { status: number; body?: string }) {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = []
  const waiters: (() => void)[] = []
  const server: Server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers })
      const { status, body } = reply(req.url ?? '', req.headers)
      res.writeHead(status, { 'content-type': 'application/json' }).end(body ?? '{}')
      waiters.splice(0).forEach((wake) => wake())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  /** Resolves once a request satisfying `test` has arrived (woken by each arrival, no polling). */
  const until = async (test: () => boolean) => {
    while (!test()) await new Promise<void>((wake) => waiters.push(wake))
  }
  return {
    url,
    seen,
    until,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}

describe('logs of a realistic session', () => {
  let server: RunningServer
  let api: Api
  const materials: string[] = []
  let receiver: Awaited<ReturnType<typeof listen>>
  let upstream: Awaited<ReturnType<typeof listen>>
  const apiRequestIds: string[] = []

  beforeAll(async () => {
    receiver = await listen(() => ({ status: 200 }))
    // The upstream registry: refuses one package with a 500 (the proxy logs a warning inside the request).
    upstream = await listen((url) => ({
      status: url.includes('broken-pkg') ? 500 : 404,
      body: '{"error":"not found"}',
    }))
    server = await startServer({
      BOOTSTRAP_TOKEN: PLANTED.bootstrap,
      METRICS_TOKEN: PLANTED.metrics,
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
      UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    })
    const base = apiClient(server.url, PLANTED.bootstrap)
    api = async (...args) => {
      const answer = await base(...args)
      apiRequestIds.push(answer.headers.get('x-request-id') ?? '')
      return answer
    }
    const personal = await api('POST', '/v1/default/tokens/personal', { name: 'ci' })
    const service = await api('POST', '/v1/default/tokens/service', {
      name: 'svc',
      permissions: ['fw:read', 'fw:access'],
    })
    materials.push(personal.body.token, service.body.token)
    const hook = await api('POST', '/v1/default/webhooks', {
      name: 'ops',
      url: `${receiver.url}/hook`,
      eventTypes: ['config.*'],
    })
    expect(hook.status).toBe(201)
    materials.push(hook.body.secret)
    materials.push((await api('POST', `/v1/default/webhooks/${hook.body.id}/secret/rotate`)).body.secret)
    materials.push((await api('GET', `/v1/default/webhooks/${hook.body.id}/secret`)).body.secret)
    const firewall = await api('PUT', '/v1/default/config/web', {
      name: PLANTED.payloadMarker,
      upstreams: [
        {
          id: 'npmjs',
          endpoint: upstream.url,
          credentials: { username: PLANTED.upstreamUser, password: PLANTED.upstreamPassword },
        },
        {
          id: 'mirror',
          endpoint: `${upstream.url}/mirror`,
          credentials: { token: PLANTED.upstreamToken },
          artifactCredentials: [{ host: 'cdn.example', credentials: { token: PLANTED.artifactToken } }],
        },
      ],
    })
    expect(firewall.status).toBe(201)
    await api('PUT', '/v1/default/config/web/upstreams/npmjs/credentials', {
      username: PLANTED.upstreamUser,
      password: PLANTED.upstreamPassword,
    })
    await api('GET', `/v1/default/config/web?access_token=${PLANTED.querySecret}`)
    await api('GET', '/v1/default/config/web/history')
    await api('GET', '/v1/default/audit')
    await api('POST', `/v1/default/webhooks/${hook.body.id}/test`)
    // Through the proxy: packuments with the personal token (one upstream failure), then refusals.
    const registry = `${server.url}/registry/default/web`
    for (const pkg of ['left-pad', 'broken-pkg'])
      await fetch(`${registry}/${pkg}`, { headers: { authorization: `Bearer ${personal.body.token}~interaction-7` } })
    await fetch(`${registry}/left-pad`, { headers: { authorization: `Bearer ${PLANTED.unknownToken}` } })
    await apiClient(server.url, PLANTED.unknownToken)('GET', '/v1/default/config')
    await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${PLANTED.metrics}` } })
    await fetch(`${server.url}/metrics?token=${PLANTED.metrics}`)
    // Deliveries carry signatures: those must not be logged either.
    await receiver.until(() => receiver.seen.some((r) => JSON.stringify(r.headers).includes('webhook-signature')))
    for (const r of receiver.seen)
      materials.push(
        String(r.headers['webhook-signature'])
          .split(' ')
          .map((s) => s.split(',')[1])
          .join(' '),
      )
    // The session really exercised the secrets: credentials went upstream, signed deliveries arrived.
    expect(upstream.seen.some((r) => r.headers.authorization?.startsWith('Basic '))).toBe(true)
    expect(receiver.seen.length).toBeGreaterThanOrEqual(2)
    // The last request's access line is written when its response closes: end with a request we can await.
    await fetch(`${server.url}/healthz`)
  })
  afterAll(async () => {
    await server?.stop()
    await receiver?.close()
    await upstream?.close()
  })

  const lines = () =>
    server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, any>)

  it('never carries a planted token, credential, secret, signature or payload', () => {
    const log = server.output()
    expect(lines().length).toBeGreaterThan(20)
    for (const secret of [...Object.values(PLANTED), ...materials.flatMap((m) => m.split(' '))])
      expect(log).not.toContain(secret)
    expect(log).not.toMatch(/fw[ps]_[A-Za-z0-9]{20,}/)
    expect(log).not.toMatch(/whsec_[A-Za-z0-9+/]{20,}/)
  })

  it('writes one access line per request with method, route template, status and duration only', () => {
    const access = lines().filter((line) => line.msg === 'request')
    for (const line of access) {
      expect(Object.keys(line).sort()).toEqual([
        'durationMs',
        'level',
        'method',
        'msg',
        'requestId',
        'route',
        'status',
        'time',
      ])
      expect(line.route).not.toMatch(/\/default\b|\/web\b|left-pad|\?/)
    }
    const ids = access.map((line) => line.requestId)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of apiRequestIds) expect(ids).toContain(id)
  })

  it('puts the request id on the lines written while a request runs, and only then', () => {
    const all = lines()
    const warning = all.find((line) => line.msg === 'upstream unavailable')
    expect(warning?.requestId).toMatch(/^req-/)
    const access = all.find((line) => line.msg === 'request' && line.requestId === warning!.requestId)
    expect(access).toMatchObject({ method: 'GET', route: '/registry/{ns}/{fw}/*', status: 503 })
    // Deliveries run in the background after the requests that queued them: no request id.
    const attempts = all.filter((line) => line.msg === 'webhook delivery attempt')
    expect(attempts.length).toBeGreaterThan(0)
    for (const line of attempts) expect(line.requestId).toBeUndefined()
  })

  it('writes delivery attempts at info and machine transitions at debug (docs/deploy.md, Logs)', () => {
    const all = lines()
    const levels = (msg: string) => new Set(all.filter((line) => line.msg === msg).map((line) => line.level))
    expect(levels('webhook delivery attempt')).toEqual(new Set(['info']))
    expect(levels('request')).toEqual(new Set(['info']))
    expect(levels('webhook delivery transition')).toEqual(new Set(['debug']))
  })
})
