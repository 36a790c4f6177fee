import { createServer, type Server } from 'node:http'
import { mkdtempSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'

/**
 * Finding 5: upstream addresses are restricted. An endpoint whose literal
 * address the policy refuses is refused when saved; a name is judged where it resolves, at
 * every connection; redirects go only to allowed addresses, at most 5 hops. Each listener
 * below counts TCP connections, so "not reached" means not even connected to.
 */

/** A loopback registry that serves one packument per name and counts every connection. */
interface Listener {
  url: string
  port: number
  connections: number
  close(): Promise<void>
}

type Answer = { status: number; body?: string; location?: string }

async function listen(host: string, handle: (path: string, self: Listener) => Answer): Promise<Listener> {
  const self = { connections: 0 } as Listener
  const server: Server = createServer((req, res) => {
    const answer = handle(req.url ?? '/', self)
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (answer.location) headers.location = answer.location
    res.writeHead(answer.status, headers).end(answer.body ?? '')
  })
  server.on('connection', () => self.connections++)
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  self.port = (server.address() as AddressInfo).port
  self.url = `http://${host.includes(':') ? `[${host}]` : host}:${self.port}`
  self.close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return self
}

const packument = (name: string) =>
  JSON.stringify({
    name,
    'dist-tags': { latest: '1.0.0' },
    versions: { '1.0.0': { name, version: '1.0.0', dist: { tarball: `http://127.0.0.1:1/${name}-1.0.0.tgz` } } },
    time: { created: '2020-01-01T00:00:00.000Z', '1.0.0': '2020-01-01T00:00:00.000Z' },
  })

const DATA_DIR = mkdtempSync(join(tmpdir(), 'pf-upstream-ssrf-'))
let registry: Listener
/** On [::1]: outside 127.0.0.0/8, so refused even when loopback v4 is allowed. */
let inner: Listener

beforeAll(async () => {
  inner = await listen('::1', (path) => ({ status: 200, body: packument(path.slice(1)) }))
  registry = await listen('127.0.0.1', (path) => {
    const url = new URL(path, 'http://x')
    const name = decodeURIComponent(url.pathname.slice(1))
    if (name === 'to-inner') return { status: 302, location: `${inner.url}/to-inner` }
    const hops = /^hops-(\d+)$/.exec(name)
    if (hops) {
      const left = Number(url.searchParams.get('left') ?? hops[1])
      return left > 0 ? { status: 302, location: `/${name}?left=${left - 1}` } : { status: 200, body: packument(name) }
    }
    return { status: 200, body: packument(name) }
  })
})

afterAll(async () => {
  await Promise.all([registry?.close(), inner?.close()])
})

async function put(api: Api, fw: string, endpoint: string, extra: Record<string, unknown> = {}) {
  return api('PUT', `/v1/default/config/${fw}`, { upstreams: [{ id: 'main', endpoint }], ...extra })
}

function install(server: RunningServer, fw: string, name: string): Promise<Response> {
  const headers = { authorization: `Bearer ${bootstrapToken(server)}` }
  return fetch(`${server.url}/registry/default/${fw}/${name}`, { headers })
}

describe('with UPSTREAM_ALLOWED_NETWORKS=127.0.0.0/8', () => {
  let server: RunningServer
  let owner: Api

  beforeAll(async () => {
    server = await startServer({ DATA_DIR, UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8' })
    owner = apiClient(server.url, bootstrapToken(server))
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('a loopback upstream works', async () => {
    expect((await put(owner, 'local', registry.url)).status).toBe(201)
    const res = await install(server, 'local', 'left-pad')
    expect(res.status).toBe(200)
    expect((await res.json()).name).toBe('left-pad')
  })

  it('follows an allowed upstream through 5 redirects and fails past them', async () => {
    expect((await install(server, 'local', 'hops-5')).status).toBe(200)
    const tooMany = await install(server, 'local', 'hops-6')
    expect([502, 503]).toContain(tooMany.status)
  })

  it('does not follow a redirect from an allowed upstream to a refused loopback address', async () => {
    const res = await install(server, 'local', 'to-inner')
    expect([502, 503]).toContain(res.status)
    expect(inner.connections).toBe(0)
  })

  it('keeps a loopback firewall and its history for the next test (saved while allowed)', async () => {
    // "legacy" goes loopback (v1) then public (v2); "kept" stays loopback.
    expect((await put(owner, 'legacy', registry.url)).status).toBe(201)
    expect((await put(owner, 'legacy', 'https://registry.npmjs.org')).status).toBe(200)
    expect((await put(owner, 'kept', registry.url)).status).toBe(201)
  })
})

describe('with the default policy (and UPSTREAM_DENIED_NETWORKS=10.0.0.0/8)', () => {
  let server: RunningServer
  let owner: Api

  beforeAll(async () => {
    // Same data: the firewalls saved above while loopback was allowed are still there.
    server = await startServer({ DATA_DIR, UPSTREAM_DENIED_NETWORKS: '10.0.0.0/8' })
    owner = apiClient(server.url, bootstrapToken(server))
  })
  afterAll(async () => {
    await server?.stop()
  })

  it.each([
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['IPv4 loopback', 'http://127.0.0.1:4873/'],
    ['IPv4 loopback, numeric spelling', 'http://2130706433:4873/'],
    ['IPv6 loopback', 'http://[::1]:4873/'],
    ['v4-mapped loopback', 'http://[::ffff:127.0.0.1]:4873/'],
    ['unspecified', 'http://0.0.0.0:4873/'],
  ])('refuses a %s endpoint when saved, naming the setting', async (_name, endpoint) => {
    const res = await put(owner, 'ssrf', endpoint)
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('upstream_address_refused')
    expect(res.body.detail).toContain('UPSTREAM_ALLOWED_NETWORKS')
    expect(res.body.errors).toEqual([{ path: 'upstreams[0].endpoint', message: expect.any(String) }])
    expect((await owner('GET', '/v1/default/config/ssrf')).status).toBe(404)
  })

  it('refuses an endpoint carrying userinfo', async () => {
    const res = await put(owner, 'ssrf', 'https://user:pass@registry.example/')
    expect(res.status).toBe(400)
    expect(res.body.errors[0].path).toBe('upstreams[0].endpoint')
  })

  it('refuses a private range named by UPSTREAM_DENIED_NETWORKS; other private ranges stay allowed', async () => {
    const denied = await put(owner, 'internal', 'http://10.1.2.3:8081/repository/npm/')
    expect(denied.status).toBe(400)
    expect(denied.body.code).toBe('upstream_address_refused')
    expect(denied.body.errors[0].message).toContain('UPSTREAM_DENIED_NETWORKS (10.0.0.0/8)')
    expect((await put(owner, 'internal', 'http://192.168.1.10:8081/repository/npm/')).status).toBe(201)
  })

  it('saves a name that resolves to loopback, but never connects to it', async () => {
    const before = registry.connections
    expect((await put(owner, 'named', `http://localhost:${registry.port}/`)).status).toBe(201)
    const res = await install(server, 'named', 'left-pad')
    expect([502, 503]).toContain(res.status)
    expect(registry.connections).toBe(before)
  })

  it('a firewall stored while loopback was allowed no longer reaches it, yet stays editable', async () => {
    const before = registry.connections
    expect([502, 503]).toContain((await install(server, 'kept', 'left-pad')).status)
    expect(registry.connections).toBe(before)
    // Its endpoint did not change: editing something else is not refused.
    const current = (await owner('GET', '/v1/default/config/kept')).body
    expect((await owner('PUT', '/v1/default/config/kept', { ...current, description: 'edited' })).status).toBe(200)
  })

  it('refuses a rollback to a version with a refused endpoint', async () => {
    const res = await owner('PUT', '/v1/default/config/legacy/version/1')
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('upstream_address_refused')
    expect((await owner('GET', '/v1/default/config/legacy')).body.upstreams[0].endpoint).toBe(
      'https://registry.npmjs.org',
    )
  })

  it('refuses a clone of a firewall with a refused endpoint', async () => {
    const res = await owner('POST', '/v1/default/config/kept/clone', { id: 'kept-copy' })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('upstream_address_refused')
    expect((await owner('GET', '/v1/default/config/kept-copy')).status).toBe(404)
  })
})
