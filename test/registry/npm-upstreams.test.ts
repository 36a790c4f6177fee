import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { startProxy, type ProxyHarness } from './harness'
import { npmClient, publishFixtures } from './npm-cli'

let registry: Verdaccio
let proxy: ProxyHarness
let publicRegistry: Server
let publicUrl: string
let token: string
/** Paths the "public" registry was asked for. */
const publicRequests: string[] = []

/**
 * A tiny stand-in for a public registry: offers an evil `fw-internal-only@9.9.9` (what a
 * dependency-confusion attacker would publish), a packument `only-public`, and a tarball whose
 * bytes do not match the integrity its packument claims.
 */
function publicPackument(name: string): unknown {
  const tarball = `${publicUrl}/${name}/-/${name}-9.9.9.tgz`
  const integrity = `sha512-${createHash('sha512').update('the real bytes').digest('base64')}`
  return {
    name,
    'dist-tags': { latest: '9.9.9' },
    versions: { '9.9.9': { name, version: '9.9.9', dist: { tarball, integrity } } },
    time: { created: '2020-01-01T00:00:00.000Z', '9.9.9': '2020-01-01T00:00:00.000Z' },
  }
}

beforeAll(async () => {
  registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, [
    { name: 'fw-internal-only', version: '1.0.0', license: 'MIT' },
    { name: 'fw-cached', version: '1.0.0', license: 'MIT' },
  ])
  publicRegistry = createServer((req, res) => {
    publicRequests.push(req.url ?? '')
    const name = decodeURIComponent((req.url ?? '/').slice(1).split('/-/')[0])
    if (req.url?.endsWith('.tgz')) return res.end('tampered bytes')
    if (['fw-internal-only', 'only-public', 'fw-tampered'].includes(name)) {
      res.setHeader('content-type', 'application/json')
      return res.end(JSON.stringify(publicPackument(name)))
    }
    res.statusCode = 404
    res.end('{"error":"not found"}')
  })
  await new Promise<void>((resolve) => publicRegistry.listen(0, '127.0.0.1', resolve))
  publicUrl = `http://127.0.0.1:${(publicRegistry.address() as AddressInfo).port}`

  proxy = await startProxy({ backend: 'fs' })
  await proxy.putFirewall('guarded', {
    // The public registry is listed first on purpose: the guard must not depend on order.
    upstreams: [
      { id: 'public', endpoint: publicUrl },
      { id: 'internal', endpoint: registry.url, credentials: { token: registry.token }, internal: true, cached: true },
    ],
  })
  token = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await registry?.stop()
  publicRegistry?.closeAllConnections()
  await new Promise((resolve) => publicRegistry?.close(resolve))
})

const get = (path: string) =>
  fetch(`${proxy.registryUrl('guarded')}${path}`, { headers: { authorization: `Bearer ${token}` } })

describe('upstreams', () => {
  it('never fetches a package present on an internal upstream from the public one', async () => {
    const client = npmClient(proxy.registryUrl('guarded'), token)
    const result = await client.npm(['install', 'fw-internal-only'])
    expect(result.code, result.output).toBe(0)
    const installed = JSON.parse(
      readFileSync(join(client.dir, 'node_modules', 'fw-internal-only', 'package.json'), 'utf8'),
    )
    expect(installed.version).toBe('1.0.0')
    expect(publicRequests.filter((path) => path.includes('fw-internal-only'))).toEqual([])
    expect(await proxy.log('guarded', { packageName: 'fw-internal-only' })).toMatchObject([
      { upstream: 'internal', blocked: false },
    ])
  })

  it('falls through to the public upstream for names the internal one lacks', async () => {
    const response = await get('only-public')
    expect(response.status).toBe(200)
    const doc = (await response.json()) as any
    expect(doc.versions['9.9.9'].dist.tarball).toBe(
      `${proxy.registryUrl('guarded')}only-public/-/only-public-9.9.9.tgz`,
    )
    expect(publicRequests).toContain('/only-public')
  })

  it('refuses a tarball whose bytes do not match dist.integrity', async () => {
    const response = await get('fw-tampered/-/fw-tampered-9.9.9.tgz')
    expect(response.status).toBe(502)
    expect(((await response.json()) as any).error).toContain('integrity')
  })

  it('serves tarballs from the cache of a cached upstream, verified by integrity', async () => {
    const warm = await npmClient(proxy.registryUrl('guarded'), token).npm(['install', 'fw-cached'])
    expect(warm.code, warm.output).toBe(0)
    await registry.stop()
    const fromCache = await npmClient(proxy.registryUrl('guarded'), token).npm(['install', 'fw-cached'])
    expect(fromCache.code, fromCache.output).toBe(0)
  })

  it('answers 503 with Retry-After when the upstream is stopped, logs the failure and emits no event', async () => {
    const eventsBefore = (await proxy.events()).length
    const logBefore = (await proxy.log('guarded')).length
    const result = await npmClient(proxy.registryUrl('guarded'), token).npm(['install', 'fw-never-seen'])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('503')
    const response = await get('fw-never-seen')
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('10')
    expect(((await response.json()) as any).error).toContain('unavailable')
    expect((await proxy.events()).length).toBe(eventsBefore)
    // The log holds the failures as entries of their own, no decision.
    const added = (await proxy.log('guarded')).slice(0, -logBefore || undefined)
    expect(added.length).toBeGreaterThan(0)
    expect(added.every((entry) => entry.outcome === 'upstream_error')).toBe(true)
    expect(added.map((entry) => entry.request)).toContain(response.headers.get('x-request-id'))
  })
})
