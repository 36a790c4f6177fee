import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { parseExposition, sum, type Exposition } from './prom-text'

const TOKEN = 'fwp_metricsTestBootstrapToken0123456789abcdef'
const METRICS_TOKEN = 'metrics-scrape-token-5d2c'

describe('/metrics', () => {
  let server: RunningServer
  let api: Api
  const scrape = async (token = METRICS_TOKEN) =>
    fetch(`${server.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  const exposition = async (): Promise<Exposition> => parseExposition(await (await scrape()).text())

  beforeAll(async () => {
    server = await startServer({ BOOTSTRAP_TOKEN: TOKEN, METRICS_TOKEN })
    api = apiClient(server.url, TOKEN)
    expect((await api('PUT', '/v1/default/config/fw-metrics-7', {})).status).toBe(201)
    expect((await api('GET', '/v1/default/config/fw-metrics-7')).status).toBe(200)
    expect((await api('GET', '/v1/default/config/no-such-fw-42')).status).toBe(404)
    expect((await api('GET', '/v1/default/not/an/operation')).status).toBe(404)
    expect((await fetch(`${server.url}/registry/default/fw-metrics-7/left-pad`)).status).toBe(401)
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('refuses a scrape without the token, or with a wrong one, with a 401 problem', async () => {
    for (const token of ['', 'wrong-token', `${METRICS_TOKEN}x`]) {
      const response = await scrape(token)
      expect(response.status).toBe(401)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect(await response.json()).toMatchObject({ status: 401, code: 'unauthenticated' })
    }
  })

  it('serves parseable Prometheus text with the default Node metrics', async () => {
    const response = await scrape()
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const parsed = parseExposition(await response.text())
    expect(parsed.types.get('process_cpu_user_seconds_total')).toBe('counter')
    expect(sum(parsed, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0)
  })

  it('counts HTTP requests by route template, method and status, with durations', async () => {
    const parsed = await exposition()
    expect(parsed.types.get('http_requests_total')).toBe('counter')
    expect(parsed.types.get('http_request_duration_seconds')).toBe('histogram')
    const fwRoute = { route: '/v1/{ns}/config/{fw}', method: 'GET' }
    expect(sum(parsed, 'http_requests_total', { ...fwRoute, status: '200' })).toBe(1)
    expect(sum(parsed, 'http_requests_total', { ...fwRoute, status: '404' })).toBe(1)
    expect(sum(parsed, 'http_requests_total', { route: '/v1/{ns}/config/{fw}', method: 'PUT', status: '201' })).toBe(1)
    expect(sum(parsed, 'http_request_duration_seconds_count', { ...fwRoute, status: '404' })).toBe(1)
    expect(sum(parsed, 'http_request_duration_seconds_sum', { ...fwRoute, status: '200' })).toBeGreaterThan(0)
    expect(sum(parsed, 'http_requests_total', { route: '/v1/*', status: '404' })).toBe(1)
    expect(sum(parsed, 'http_requests_total', { route: '/registry/{ns}/{fw}/*', status: '401' })).toBe(1)
    expect(sum(parsed, 'http_requests_total', { route: '/healthz', status: '200' })).toBeGreaterThanOrEqual(1)
  })

  it('never puts raw ids or paths into labels', async () => {
    const labels = JSON.stringify((await exposition()).samples.map((s) => s.labels))
    for (const raw of ['fw-metrics-7', 'no-such-fw-42', 'left-pad', 'not/an/operation', '/default/'])
      expect(labels).not.toContain(raw)
  })

  it('declares the delivery, actor, proxy, upstream and lease families', async () => {
    const { types } = await exposition()
    expect(
      Object.fromEntries(
        [
          'webhook_delivery_attempts_total',
          'webhook_delivery_attempt_duration_seconds',
          'webhook_buffered_events',
          'actors',
          'registry_proxy_decisions_total',
          'registry_upstream_request_duration_seconds',
          'registry_upstream_errors_total',
          'leases_owned',
          'rate_limited_requests_total',
          'log_retention_runs_total',
        ].map((name) => [name, types.get(name)]),
      ),
    ).toEqual({
      webhook_delivery_attempts_total: 'counter',
      webhook_delivery_attempt_duration_seconds: 'histogram',
      webhook_buffered_events: 'gauge',
      actors: 'gauge',
      registry_proxy_decisions_total: 'counter',
      registry_upstream_request_duration_seconds: 'histogram',
      registry_upstream_errors_total: 'counter',
      leases_owned: 'gauge',
      rate_limited_requests_total: 'counter',
      log_retention_runs_total: 'counter',
    })
  })

  it('shows this process holding the retention lease (alone on its storage)', async () => {
    expect(sum(await exposition(), 'leases_owned', { kind: 'retention' })).toBe(1)
    expect(sum(await exposition(), 'log_retention_runs_total')).toBeGreaterThanOrEqual(1)
  })
})
