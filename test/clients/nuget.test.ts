import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startNugetUpstream, type NugetUpstream } from '../support/nuget-upstream'
import { nupkg } from '../fixtures/ecosystems/packages'

// No NuGet client installs here (no Microsoft feed, no mono): these requests are built the way
// the clients write them. The old v2 `nuget` client ends the package part with a bare LF.

let upstream: NugetUpstream
let proxy: ProxyHarness
let token: string
let base: string

beforeAll(async () => {
  upstream = await startNugetUpstream({ apiKey: 'feed-key' })
  proxy = await startProxy()
  await proxy.putFirewall('dotnet', {
    ecosystem: 'nuget',
    upstreams: [{ id: 'feed', endpoint: upstream.index, credentials: { token: 'feed-key' }, internal: true }],
    rules: [],
  })
  // A feed read without credentials: it receives no publishes.
  await proxy.putFirewall('read-only', {
    ecosystem: 'nuget',
    upstreams: [{ id: 'public', endpoint: upstream.index }],
    rules: [],
  })
  token = await proxy.token('owner')
  base = proxy.registryUrl('dotnet')
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

/** The old `nuget push` body: CRLF header lines, the package, then a bare LF and the closing boundary. */
function oldClientBody(boundary: string, bytes: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="package"; filename="package.nupkg"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    bytes,
    Buffer.from(`\n--${boundary}--\r\n`),
  ])
}

describe('NuGet clients', () => {
  it('accepts the old nuget client push body (bare LF before the closing boundary) and relays it conforming', async () => {
    const bytes = nupkg('Acme.Old', '1.0.0')
    const response = await fetch(`${base}api/v2/package`, {
      method: 'PUT',
      headers: {
        'x-nuget-apikey': token,
        'content-type': 'multipart/form-data; boundary=8d9a2c3b4e5f',
      },
      body: new Uint8Array(oldClientBody('8d9a2c3b4e5f', bytes)),
    })
    expect(response.status).toBe(201)
    expect(upstream.versions.get('acme.old')?.[0].nupkg.equals(bytes)).toBe(true)
  })

  it('answers v2 (OData) requests with a message naming the v3 service index', async () => {
    const headers = { authorization: `Basic ${Buffer.from(`nuget:${token}`).toString('base64')}` }
    for (const path of ['', '$metadata', "FindPackagesById()?id='Acme.Old'", 'Packages()', 'api/v2/Search()']) {
      const response = await fetch(`${base}${path}`, { headers })
      expect(response.status, path).toBe(404)
      const expected = `this NuGet feed speaks the v3 protocol only: use the service index ${base}v3/index.json with a NuGet 3.0 or later client (dotnet CLI, nuget.exe 3.0+, Visual Studio 2015+); v2 (OData) requests such as FindPackagesById() are not served`
      expect(response.statusText).toBe(expected)
      expect(((await response.json()) as { error: string }).error).toBe(expected)
    }
  })

  it('a publish to a firewall without an internal upstream or one with credentials is 405 naming the rule', async () => {
    const response = await fetch(`${proxy.registryUrl('read-only')}api/v2/package`, {
      method: 'PUT',
      headers: { 'x-nuget-apikey': token, 'content-type': 'multipart/form-data; boundary=b1' },
      body: new Uint8Array(oldClientBody('b1', nupkg('Acme.Ro', '1.0.0'))),
    })
    expect(response.status).toBe(405)
    expect(((await response.json()) as { error: string }).error).toBe(
      'firewall read-only accepts no publishes: a publish goes to its first upstream marked internal, else to its first upstream with credentials, and it has neither (docs/clients.md)',
    )
    expect(upstream.versions.has('acme.ro')).toBe(false)
  })
})
