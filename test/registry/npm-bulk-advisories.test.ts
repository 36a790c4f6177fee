import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { send, startLoopback, type Loopback } from '../support/loopback'
import { startProxy, type ProxyHarness } from './harness'
import { eventually as readUntil } from '../support/wait-for'

const eventually = <T>(read: () => Promise<T | undefined>) =>
  readUntil(read, { timeoutMs: 5_000, what: 'the log entries', intervalMs: 50 }) as Promise<T>

const ADVISORY_DIR = join(__dirname, '..', 'fixtures', 'advisories')

/** What the stand-in public registry answers to the bulk advisory call, set per test. */
let answer: { status: number; body: string; type?: string } = { status: 200, body: '{}' }
let upstream: Loopback
let proxy: ProxyHarness
let token: string

beforeAll(async () => {
  upstream = await startLoopback((req, res, url) => {
    if (req.method === 'POST' && url.pathname === '/-/npm/v1/security/advisories/bulk') {
      return send(res, answer.status, answer.body, answer.type ?? 'application/json')
    }
    send(res, 404, '{}', 'application/json')
  })
  proxy = await startProxy({ backend: 'fs', advisoryDir: ADVISORY_DIR })
  await proxy.putFirewall('audit', { upstreams: [{ id: 'public-reg', endpoint: upstream.url }], rules: [] })
  token = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

const bulk = () =>
  fetch(`${proxy.registryUrl('audit')}-/npm/v1/security/advisories/bulk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ 'fw-vuln': ['1.0.0'], 'up-only': ['2.0.0'] }),
  })

describe('npm bulk advisories and the public upstream', () => {
  it('merges a readable upstream answer with the firewall advisory data', async () => {
    answer = {
      status: 200,
      body: JSON.stringify({ 'up-only': [{ id: 1001, title: 'upstream finding', severity: 'low' }] }),
    }
    const response = await bulk()
    expect(response.status).toBe(200)
    const body = (await response.json()) as Record<string, { id: string | number }[]>
    expect(body['up-only'].map((a) => a.id)).toEqual([1001])
    expect(body['fw-vuln'].map((a) => a.id)).toEqual(['GHSA-fwvu-lnxx-0001'])
  })

  it('refuses with 502 naming the upstream when its answer is not JSON', async () => {
    answer = { status: 200, body: '<html>gateway hiccup</html>', type: 'text/html' }
    const response = await bulk()
    expect(response.status).toBe(502)
    const body = (await response.json()) as { error: string }
    expect(body.error).toContain('bulk advisories')
    expect(body.error).toContain('upstream public-reg')
    expect(body.error).toContain('not JSON')
  })

  it('refuses with 502 when the upstream answers JSON that is not an object', async () => {
    answer = { status: 200, body: '[1, 2, 3]' }
    const response = await bulk()
    expect(response.status).toBe(502)
    expect(((await response.json()) as { error: string }).error).toContain('not a JSON object')
  })

  it('answers the firewall data alone when the upstream has no such endpoint or fails', async () => {
    for (const status of [404, 503]) {
      answer = { status, body: '{"error":"nope"}' }
      const response = await bulk()
      expect(response.status).toBe(200)
      const body = (await response.json()) as Record<string, { id: string }[]>
      expect(Object.keys(body)).toEqual(['fw-vuln'])
    }
  })

  it('writes a failing endpoint to the firewall log, and not one the registry lacks', async () => {
    const requestOf = async (status: number, body: string) => {
      answer = { status, body }
      const response = await bulk()
      return { status: response.status, id: response.headers.get('x-request-id') }
    }
    const missing = await requestOf(404, '{}')
    const failing = await requestOf(503, '{}')
    const unreadable = await requestOf(200, '[1, 2, 3]')
    expect([missing.status, failing.status, unreadable.status]).toEqual([200, 200, 502])
    // The answer goes out before the log write: read until both failures are there.
    const failedCalls = await eventually(async () => {
      const ours = [missing.id, failing.id, unreadable.id]
      const entries = ((await proxy.log('audit')) as { outcome: string; request: string }[]).filter(
        (entry) => entry.outcome === 'upstream_error' && ours.includes(entry.request),
      )
      return entries.length >= 2 ? entries : undefined
    })
    expect(failedCalls.map((entry) => entry.request).sort()).toEqual([failing.id, unreadable.id].sort())
    expect(failedCalls).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ request: failing.id, upstream: 'public-reg', reason: 'status 503' }),
        expect.objectContaining({ request: unreadable.id, reason: 'answer not a JSON object' }),
      ]),
    )
  })
})
