import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from './harness'

/**
 * Package names, versions and dist-tags are client and upstream strings: `constructor` is a real
 * npm package, and a tag or version may be named after any built-in property. The proxy must
 * answer them as ordinary names (ids), never from Object.prototype.
 */
const BUILT_INS = ['constructor', '__proto__', 'valueOf', 'toString', 'hasOwnProperty']

let upstream: Server
let upstreamUrl: string
let proxy: ProxyHarness
let token: string

/** A packument for `constructor` whose tags and `time` keys are named after built-ins too. */
function packument(): unknown {
  const version = (v: string) => ({
    name: 'constructor',
    version: v,
    license: 'MIT',
    dist: { tarball: `${upstreamUrl}/constructor/-/constructor-${v}.tgz` },
  })
  return JSON.parse(
    JSON.stringify({
      name: 'constructor',
      'dist-tags': { latest: '2.0.0', constructor: '1.0.0', valueOf: '2.0.0' },
      versions: { '1.0.0': version('1.0.0'), '2.0.0': version('2.0.0') },
      time: {
        created: '2020-01-01T00:00:00.000Z',
        '1.0.0': '2020-01-01T00:00:00.000Z',
        '2.0.0': '2020-02-01T00:00:00.000Z',
        toString: 'x',
      },
    }).replace('"valueOf"', '"__proto__"'),
  )
}

async function get(path: string, fw = 'open'): Promise<{ status: number; body: any }> {
  const response = await fetch(`${proxy.registryUrl(fw)}${path}`, { headers: { authorization: `Bearer ${token}` } })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    if (req.url === '/constructor') return res.end(JSON.stringify(packument()))
    if (req.url?.endsWith('.tgz')) return res.end('bytes')
    res.statusCode = 404
    res.end('{"error":"not found"}')
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  const advisoryDir = mkdtempSync(join(tmpdir(), 'pf-proto-advisories-'))
  writeFileSync(
    join(advisoryDir, 'GHSA-ctor-0000-0001.json'),
    JSON.stringify({
      id: 'GHSA-ctor-0000-0001',
      summary: 'A flaw in constructor',
      affected: [
        {
          package: { ecosystem: 'npm', name: 'constructor' },
          ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '2.0.0' }] }],
        },
      ],
      database_specific: { severity: 'HIGH' },
    }),
  )
  proxy = await startProxy({ backend: 'fs', advisoryDir })
  token = await proxy.token('owner')
  const upstreams = [{ id: 'public', endpoint: upstreamUrl }]
  await proxy.putFirewall('open', { upstreams })
  await proxy.putFirewall('strict', {
    upstreams,
    rules: [
      {
        id: 'no-2',
        executionPhase: 'versions',
        selector: { function: { name: 'versionRange', package: 'constructor', range: '>=2.0.0' } },
      },
    ],
  })
}, 60_000)

afterAll(async () => {
  await proxy?.close()
  await new Promise<void>((resolve) => upstream?.close(() => resolve()))
})

describe('npm names, versions and tags named after built-in properties', () => {
  it('serves the packument of `constructor` with every tag, `__proto__` included', async () => {
    const res = await get('constructor')
    expect(res.status).toBe(200)
    expect(Object.keys(res.body['dist-tags']).sort()).toEqual(['__proto__', 'constructor', 'latest'])
    expect(Object.keys(res.body.versions)).toEqual(['1.0.0', '2.0.0'])
  })

  it('resolves a tag named `constructor` to its version and answers 404 for names that are neither', async () => {
    const tagged = await get('constructor/constructor')
    expect(tagged.status).toBe(200)
    expect(tagged.body.version).toBe('1.0.0')
    expect((await get('constructor/__proto__')).body.version).toBe('2.0.0')
    for (const spec of ['valueOf', 'toString', 'hasOwnProperty']) {
      const res = await get(`constructor/${spec}`)
      expect(res.status, spec).toBe(404)
      expect(res.body.error, spec).toContain(`version ${spec} of constructor was not found`)
    }
  })

  it('answers 404 for a tarball whose version is a built-in name', async () => {
    for (const version of BUILT_INS) {
      expect((await get(`constructor/-/constructor-${version}.tgz`)).status, version).toBe(404)
    }
  })

  it('filters versions and keeps tags named after built-ins pointing where they may', async () => {
    const res = await get('constructor', 'strict')
    expect(res.status).toBe(200)
    expect(Object.keys(res.body.versions)).toEqual(['1.0.0'])
    // `latest` and the `__proto__` tag pointed at the hidden 2.0.0 and are repaired; `constructor` stays.
    expect(res.body['dist-tags']).toEqual({ latest: '1.0.0', constructor: '1.0.0', ['__proto__']: '1.0.0' })
    expect(Object.keys(res.body.policyRestrictions.versions)).toEqual(['2.0.0'])
    expect(res.body.time.toString).toBe('x')
    expect((await get('constructor/2.0.0', 'strict')).status).toBe(403)
  })

  it('answers bulk advisories for packages named after built-ins', async () => {
    const query = Object.fromEntries(BUILT_INS.map((name) => [name, ['1.0.0']]))
    const response = await fetch(`${proxy.registryUrl('open')}-/npm/v1/security/advisories/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(query),
    })
    expect(response.status).toBe(200)
    // Read into a Map: on a plain object, `.constructor` would be Object's whatever the answer held.
    const body = new Map(Object.entries((await response.json()) as Record<string, { id: string }[]>))
    expect([...body.keys()]).toEqual(['constructor'])
    expect(body.get('constructor')?.map((advisory) => advisory.id)).toEqual(['GHSA-ctor-0000-0001'])
  })
})
