import { request } from 'node:http'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { validHost } from '../../server/http/request-origin'
import { parseTrustProxy, type TrustProxy } from '../../server/http/trust-proxy'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startStaticPypi, type StaticPypi } from '../support/static-pypi'
import { wheel } from '../fixtures/ecosystems/packages'

/**
 * Issue 24: `Host` or `X-Forwarded-Host: a b` on the registry gave 500, and `X-Forwarded-Host`
 * was honoured without `TRUST_PROXY` in block links and tarball URLs. The origin written into
 * answers is the validated Host, or what a proxy TRUST_PROXY names forwarded; PUBLIC_BASE_URL wins.
 */

let index: StaticPypi
let proxy: ProxyHarness
let token: string

beforeAll(async () => {
  index = await startStaticPypi([{ project: 'fw-evil', ...wheel('fw-evil', '1.0') }])
  proxy = await startProxy({ backend: 'fs' })
  await proxy.putFirewall('py', {
    ecosystem: 'pypi',
    upstreams: [{ id: 'static', endpoint: index.url }],
    rules: [
      {
        id: 'dl-block',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['fw-evil*'] } },
        description: 'fw-evil* packages are banned',
      },
    ],
  })
  token = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await index?.close()
})

/** The edge's TRUST_PROXY, as the composition root would have parsed it (config.trustProxy). */
const trustProxy = (value: string) => {
  ;(proxy.services.config as { trustProxy: TrustProxy }).trustProxy = parseTrustProxy(value)
}

afterEach(() => {
  trustProxy('')
  ;(proxy.services.config as { publicBaseUrl: string | null }).publicBaseUrl = null
})

/** A blocked download over a raw socket (fetch does not let a client set Host). */
function blockedDownload(headers: Record<string, string>): Promise<{ status: number; error: string }> {
  const url = new URL(`${proxy.registryUrl('py')}files/fw-evil/fw_evil-1.0-py3-none-any.whl`)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: { authorization: `Bearer ${token}`, ...headers },
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk) => (text += chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, error: JSON.parse(text).error }))
      },
    )
    req.on('error', reject).end()
  })
}

const linkOrigin = (error: string) => /Request an exception: (\S+?)\/namespaces\//.exec(error)?.[1]

describe('the origin of links the registry writes', () => {
  it('an invalid Host is 400, never 500', async () => {
    for (const host of ['a b', 'x/y', 'exa mple.com:80', '999.1.1.1', 'host:99999']) {
      const answer = await blockedDownload({ host })
      expect([host, answer.status]).toEqual([host, 400])
      expect(answer.error).toMatch(/Host header is not a valid host name/)
    }
  })

  it('without TRUST_PROXY, X-Forwarded-Host and -Proto are ignored: the Host is used', async () => {
    const answer = await blockedDownload({
      host: 'Registry.Internal:8080',
      'x-forwarded-host': 'a b',
      'x-forwarded-proto': 'https',
    })
    expect(answer.status).toBe(403)
    expect(linkOrigin(answer.error)).toBe('http://registry.internal:8080')
  })

  it('behind a proxy TRUST_PROXY names, its X-Forwarded-Host and -Proto are used', async () => {
    trustProxy('127.0.0.1')
    const answer = await blockedDownload({ 'x-forwarded-host': 'firewall.example', 'x-forwarded-proto': 'https' })
    expect(answer.status).toBe(403)
    expect(linkOrigin(answer.error)).toBe('https://firewall.example')
  })

  it('behind a trusted proxy, an invalid X-Forwarded-Host is 400', async () => {
    trustProxy('1')
    const answer = await blockedDownload({ 'x-forwarded-host': 'a b' })
    expect(answer.status).toBe(400)
  })

  it('a proxy TRUST_PROXY does not name is not believed', async () => {
    trustProxy('10.0.0.0/8')
    const answer = await blockedDownload({ host: 'registry.internal', 'x-forwarded-host': 'firewall.example' })
    expect(linkOrigin(answer.error)).toBe('http://registry.internal')
  })

  it('PUBLIC_BASE_URL wins over both, whatever the Host', async () => {
    ;(proxy.services.config as { publicBaseUrl: string | null }).publicBaseUrl = 'https://pf.example'
    trustProxy('1')
    const answer = await blockedDownload({ host: 'a b', 'x-forwarded-host': 'firewall.example' })
    expect(answer.status).toBe(403)
    expect(linkOrigin(answer.error)).toBe('https://pf.example')
  })
})

describe('valid hosts', () => {
  it('names, addresses and ports; canonical spelling', () => {
    expect(validHost('Registry.Example:8443')).toBe('registry.example:8443')
    expect(validHost('127.0.0.1')).toBe('127.0.0.1')
    expect(validHost('[::1]:3000')).toBe('[::1]:3000')
    expect(validHost('my_host.internal')).toBe('my_host.internal')
  })

  it('nothing else', () => {
    for (const host of [undefined, '', 'a b', 'a/b', 'a@b', '[zz]', 'a:0', 'a:', 'a:b', '-a', `${'a'.repeat(64)}.x`])
      expect(validHost(host), String(host)).toBeNull()
  })
})
