import { readdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startStaticPypi, type StaticPypi } from '../support/static-pypi'
import { wheel } from '../fixtures/ecosystems/packages'
import { pypiRoot } from '../../server/registry/pypi/endpoint'
import { pip } from './pip'
import { parseTrustProxy, type TrustProxy } from '../../server/http/trust-proxy'

/**
 * the README (Using a firewall): a PyPI upstream written as the index root or as the simple index URL pip
 * takes (`.../simple/`) is the same upstream. Real pip against a static PEP 503 index served by
 * `python3 -m http.server`.
 */

let index: StaticPypi
let proxy: ProxyHarness
let token: string

const BLOCK = {
  id: 'dl-block',
  executionPhase: 'download',
  selector: { function: { name: 'packageName', patterns: ['fw-evil*'] } },
  description: 'fw-evil* packages are banned',
}

beforeAll(async () => {
  index = await startStaticPypi(
    [
      ['fw-demo', '1.0'],
      ['fw-evil', '1.0'],
    ].map(([name, version]) => ({ project: name, ...wheel(name, version) })),
  )
  proxy = await startProxy({ backend: 'fs' })
  await proxy.putFirewall('py-root', {
    ecosystem: 'pypi',
    upstreams: [{ id: 'static', endpoint: index.url }],
    rules: [BLOCK],
  })
  await proxy.putFirewall('py-simple', {
    ecosystem: 'pypi',
    upstreams: [{ id: 'static', endpoint: `${index.url}simple/` }],
    rules: [BLOCK],
  })
  await proxy.putFirewall('py-simple-noslash', {
    ecosystem: 'pypi',
    upstreams: [{ id: 'static', endpoint: `${index.url}simple` }],
    rules: [BLOCK],
  })
  token = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await index?.close()
})

describe('the exception link of a block message', () => {
  const file = () => `${proxy.registryUrl('py-root')}files/fw-evil/fw_evil-1.0-py3-none-any.whl`
  const auth = () => ({ authorization: `Bearer ${token}` })

  it('uses the origin the client called, X-Forwarded-* of a proxy TRUST_PROXY names included', async () => {
    const config = proxy.services.config as { trustProxy: TrustProxy }
    config.trustProxy = parseTrustProxy('127.0.0.1')
    const response = await fetch(file(), {
      headers: { ...auth(), 'x-forwarded-proto': 'https', 'x-forwarded-host': 'firewall.example' },
    }).finally(() => (config.trustProxy = parseTrustProxy('')))
    expect(response.status).toBe(403)
    const { error } = (await response.json()) as { error: string }
    const requestId = response.headers.get('x-request-id')!
    expect(error).toContain(
      `Request an exception: https://firewall.example/namespaces/acme/firewalls/py-root/exception-requests/new?request=${requestId}`,
    )
    // pip prints the reason phrase: the link is there too.
    expect(response.statusText).toContain('/exception-requests/new?request=')
  })

  it('uses DASHBOARD_URL when it is set', async () => {
    const config = proxy.services.config as { dashboardUrl: string | null }
    config.dashboardUrl = 'https://dash.example'
    try {
      const response = await fetch(file(), { headers: auth() })
      const { error } = (await response.json()) as { error: string }
      expect(error).toContain(
        `Request an exception: https://dash.example/namespaces/acme/firewalls/py-root/exception-requests/new?request=${response.headers.get('x-request-id')}`,
      )
    } finally {
      config.dashboardUrl = null
    }
  })
})

describe('PyPI upstream endpoints', () => {
  it('reduce to the index root', () => {
    expect(pypiRoot('https://pypi.org/simple/')).toBe('https://pypi.org/')
    expect(pypiRoot('https://pypi.org/simple')).toBe('https://pypi.org/')
    expect(pypiRoot('https://pypi.org')).toBe('https://pypi.org/')
    expect(pypiRoot('https://nexus.example/repository/pypi/simple/')).toBe('https://nexus.example/repository/pypi/')
    expect(pypiRoot('https://nexus.example/repository/simple-things/')).toBe(
      'https://nexus.example/repository/simple-things/',
    )
  })

  it.each(['py-root', 'py-simple', 'py-simple-noslash'])(
    'pip downloads through a firewall whose upstream is written as %s',
    async (fw) => {
      const result = await pip(proxy.registryUrl(fw), token, ['download', 'fw-demo==1.0'])
      expect(result.code, result.output).toBe(0)
      expect(readdirSync(result.dir)).toEqual(['fw_demo-1.0-py3-none-any.whl'])
      expect(await proxy.log(fw, { packageName: 'fw-demo' })).toMatchObject([
        { blocked: false, upstream: 'static', version: '1.0' },
      ])
    },
  )

  it('blocks through the simple/ endpoint as through the root, and lists the root index', async () => {
    const result = await pip(proxy.registryUrl('py-simple'), token, ['download', 'fw-evil==1.0'])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('dl-block')
    expect(await proxy.log('py-simple', { packageName: 'fw-evil' })).toMatchObject([
      { blocked: true, rule: 'dl-block' },
    ])
    const auth = { authorization: `Basic ${Buffer.from(`__token__:${token}`).toString('base64')}` }
    const root = await fetch(`${proxy.registryUrl('py-simple')}simple/`, { headers: auth })
    expect(root.status).toBe(200)
    const text = await root.text()
    expect(text).toContain('fw-demo')
    expect(text).toContain('fw-evil')
  })
})
