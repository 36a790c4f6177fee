import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startNugetUpstream, type NugetUpstream } from '../support/nuget-upstream'
import { nupkg } from '../fixtures/ecosystems/packages'
import { send, startLoopback } from '../support/loopback'

let upstream: NugetUpstream
let proxy: ProxyHarness
let token: string
let index: Record<string, string>

beforeAll(async () => {
  upstream = await startNugetUpstream({ apiKey: 'feed-key' })
  for (const v of ['1.0.0', '1.1.0', '2.0.0-rc.1']) upstream.add('Acme.Core', v, nupkg('Acme.Core', v))
  upstream.add('Evil.Payload', '1.0.0', nupkg('Evil.Payload', '1.0.0'))
  upstream.add('Evil.Approved', '1.0.0', nupkg('Evil.Approved', '1.0.0'))
  proxy = await startProxy({ backend: 'redis' })
  await proxy.putFirewall('nu', {
    ecosystem: 'nuget',
    upstreams: [{ id: 'internal-feed', endpoint: upstream.index, credentials: { token: 'feed-key' }, internal: true }],
    rules: [
      {
        id: 'dl-block',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['evil.*'] } },
        description: 'Evil.* is banned',
      },
      {
        id: 'hide-pre',
        executionPhase: 'versions',
        selector: { function: { name: 'versionRange', package: 'acme.core', range: '>=2.0.0-0' } },
        description: 'Acme.Core 2 is not approved',
      },
      {
        id: 'up-block',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['Reserved.*'] } },
        description: 'Reserved.* ids are reserved',
      },
    ],
    exceptions: [
      { id: 'ex-dl', rule: 'dl-block', selector: { packageName: 'Evil.Approved' }, reason: 'false_positive' },
      {
        id: 'ex-up',
        rule: 'up-block',
        selector: { packageName: 'Reserved.Ok', version: '1.0.0' },
        reason: 'internal_package',
      },
    ],
  })
  token = await proxy.token('owner')
  // What a NuGet client does first: read the service index and pick its resources.
  const doc = (await (await read('v3/index.json')).json()) as { resources: { '@id': string; '@type': string }[] }
  index = Object.fromEntries(doc.resources.map((r) => [r['@type'], r['@id']]))
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

const basic = () => ({ authorization: `Basic ${Buffer.from(`nuget:${token}`).toString('base64')}` })
function read(path: string): Promise<Response> {
  return fetch(path.startsWith('http') ? path : `${proxy.registryUrl('nu')}${path}`, { headers: basic() })
}

/** `nuget push`'s request: PUT multipart with the package as a file part, token in X-NuGet-ApiKey. */
function push(bytes: Buffer): Promise<Response> {
  const form = new FormData()
  form.append('package', new Blob([new Uint8Array(bytes)]), 'package.nupkg')
  return fetch(index['PackagePublish/2.0.0'], {
    method: 'PUT',
    headers: { 'x-nuget-apikey': token, 'x-nuget-protocol-version': '4.1.0' },
    body: form,
  })
}

describe('NuGet v3 reads through the firewall', () => {
  it('serves a service index whose resources all point at the proxy', () => {
    const base = proxy.registryUrl('nu')
    expect(index['PackageBaseAddress/3.0.0']).toBe(`${base}v3-flatcontainer/`)
    expect(index['RegistrationsBaseUrl/3.6.0']).toBe(`${base}v3/registration/`)
    expect(index['PackagePublish/2.0.0']).toBe(`${base}api/v2/package`)
  })

  it('filters the flat-container version list and registrations by versions rules, without events', async () => {
    expect(await (await read(`${index['PackageBaseAddress/3.0.0']}acme.core/index.json`)).json()).toEqual({
      versions: ['1.0.0', '1.1.0'],
    })
    const reg = (await (await read(`${index['RegistrationsBaseUrl/3.6.0']}acme.core/index.json`)).json()) as any
    const leaves = reg.items.flatMap((page: any) => page.items)
    expect(leaves.map((l: any) => l.catalogEntry.version)).toEqual(['1.0.0', '1.1.0'])
    expect(leaves[1].packageContent).toBe(`${index['PackageBaseAddress/3.0.0']}acme.core/1.1.0/acme.core.1.1.0.nupkg`)
    expect(await proxy.log('nu', { packageName: 'Acme.Core' })).toEqual([])
  })

  it('downloads package content as a logged download decision with the registration facts', async () => {
    const response = await read(`${index['PackageBaseAddress/3.0.0']}acme.core/1.1.0/acme.core.1.1.0.nupkg`)
    expect(response.status).toBe(200)
    expect(Buffer.from(await response.arrayBuffer()).equals(upstream.versions.get('acme.core')![1].nupkg)).toBe(true)
    expect(await proxy.log('nu', { packageName: 'Acme.Core' })).toMatchObject([
      { outcome: 'allowed', version: '1.1.0', published: '2020-01-01T00:00:00Z', upstream: 'internal-feed' },
    ])
  })

  it('blocks a download with the rule in the reason phrase NuGet prints, event and log entry', async () => {
    const response = await read(`${index['PackageBaseAddress/3.0.0']}evil.payload/1.0.0/evil.payload.1.0.0.nupkg`)
    expect(response.status).toBe(403)
    expect(response.statusText).toContain('dl-block')
    expect(response.statusText).toContain('Evil.* is banned')
    const [event] = (await proxy.events('firewall.blocked')).filter((e) => e.data.packageName === 'Evil.Payload')
    expect(event.data).toMatchObject({
      ecosystem: 'nuget',
      version: '1.0.0',
      executionPhase: 'download',
      rule: 'dl-block',
    })
    expect(response.statusText).toContain(event.data.request)
    expect(await proxy.log('nu', { packageName: 'Evil.Payload' })).toHaveLength(1)
  })

  it('lets an excepted package through with firewall.exception-allowed', async () => {
    expect(
      (await read(`${index['PackageBaseAddress/3.0.0']}evil.approved/1.0.0/evil.approved.1.0.0.nupkg`)).status,
    ).toBe(200)
    const [event] = (await proxy.events('firewall.exception-allowed')).filter(
      (e) => e.data.packageName === 'Evil.Approved',
    )
    expect(event.data).toMatchObject({ rule: 'dl-block', exception: 'ex-dl' })
  })

  it('refuses a hidden version as a download decision', async () => {
    expect(
      (await read(`${index['PackageBaseAddress/3.0.0']}acme.core/2.0.0-rc.1/acme.core.2.0.0-rc.1.nupkg`)).status,
    ).toBe(403)
  })
})

describe('NuGet registrations an upstream lists in pages', () => {
  it('fetches the pages a few at a time and lists every version', async () => {
    for (let minor = 0; minor < 100; minor++)
      upstream.add('Acme.Paged', `1.${minor}.0`, nupkg('Acme.Paged', `1.${minor}.0`))
    upstream.pagedRegistrations.set('acme.paged', 50)
    const response = await read(`${index['RegistrationsBaseUrl/3.6.0']}acme.paged/index.json`)
    expect(response.status).toBe(200)
    const leaves = ((await response.json()) as any).items.flatMap((page: any) => page.items)
    expect(leaves).toHaveLength(100)
    expect(leaves.at(-1).catalogEntry.version).toBe('1.99.0')
    expect(upstream.pageFetches.total).toBe(50)
    // All at once, the 50 pages were 50 requests in flight (each page takes the feed a few ms).
    expect(upstream.pageFetches.maxInFlight).toBeGreaterThan(1)
    expect(upstream.pageFetches.maxInFlight).toBeLessThanOrEqual(4)
  })

  it('sends the feed its credentials, and not the other origin its index names for the pages', async () => {
    const relayed: (string | undefined)[] = []
    // Another origin serving the pages (the feed's own, relayed): what an upstream's answer may name.
    const elsewhere = await startLoopback(async (req, res, url) => {
      relayed.push(req.headers.authorization)
      const page = await fetch(`${upstream.url}${url.pathname}`)
      send(res, page.status, Buffer.from(await page.arrayBuffer()), 'application/json')
    })
    try {
      for (const v of ['1.0.0', '1.1.0', '1.2.0', '1.3.0']) upstream.add('Acme.Mirrored', v, nupkg('Acme.Mirrored', v))
      upstream.pagedRegistrations.set('acme.mirrored', 2)
      upstream.pagesAt.set('acme.mirrored', elsewhere.url)
      const response = await read(`${index['RegistrationsBaseUrl/3.6.0']}acme.mirrored/index.json`)
      expect(response.status).toBe(200)
      expect(((await response.json()) as any).items.flatMap((page: any) => page.items)).toHaveLength(4)
      expect(upstream.authorizations.get('/reg/acme.mirrored/index.json')).toBe('Bearer feed-key')
      expect(relayed).toEqual([undefined, undefined])
    } finally {
      await elsewhere.close()
    }
  })

  it('leaves out what an upstream lists as a page or a leaf but is not one, never a 500', async () => {
    upstream.add('Acme.Junk', '1.0.0', nupkg('Acme.Junk', '1.0.0'))
    upstream.add('Acme.Junk', '1.1.0', nupkg('Acme.Junk', '1.1.0'))
    upstream.pagedRegistrations.set('acme.junk', 1)
    upstream.junkPages.set('acme.junk', [null, 7, { '@id': 'not a url' }, { '@id': 42 }, { items: 'no list' }])
    upstream.junkLeaves.set('acme.junk', [
      null,
      7,
      {},
      { catalogEntry: null },
      { catalogEntry: { id: 'Acme.Junk' } },
      { catalogEntry: { id: 'Acme.Junk', version: 3 } },
    ])
    const response = await read(`${index['RegistrationsBaseUrl/3.6.0']}acme.junk/index.json`)
    expect(response.status).toBe(200)
    const leaves = ((await response.json()) as any).items.flatMap((page: any) => page.items)
    expect(leaves.map((leaf: any) => leaf.catalogEntry.version)).toEqual(['1.0.0', '1.1.0'])
    const download = await read(`${index['PackageBaseAddress/3.0.0']}acme.junk/1.1.0/acme.junk.1.1.0.nupkg`)
    expect(download.status).toBe(200)
  })

  it('refuses an index listing more pages than it reads, and fetches none of them', async () => {
    upstream.add('Acme.Huge', '1.0.0', nupkg('Acme.Huge', '1.0.0'))
    upstream.pagedRegistrations.set('acme.huge', 1_001)
    const fetched = upstream.pageFetches.total
    const response = await read(`${index['RegistrationsBaseUrl/3.6.0']}acme.huge/index.json`)
    expect(response.status).toBe(502)
    expect(await response.text()).toContain('lists 1001 registration pages for acme.huge, more than the 1000')
    expect(upstream.pageFetches.total).toBe(fetched)
  })
})

describe('NuGet push and unlist through the firewall', () => {
  it('pushes to the publish target with its own API key and emits package.published', async () => {
    const response = await push(nupkg('Acme.Tool', '1.0.0'))
    expect(response.status).toBe(201)
    expect(upstream.versions.get('acme.tool')?.map((v) => v.version)).toEqual(['1.0.0'])
    const [event] = (await proxy.events('package.published')).filter((e) => e.data.packageName === 'Acme.Tool')
    expect(event.data).toMatchObject({
      firewall: 'nu',
      ecosystem: 'nuget',
      version: '1.0.0',
      upstream: 'internal-feed',
      actor: { userId: 'owner' },
    })
    expect(event.data.file).toBeUndefined()
    expect(await proxy.log('nu', { packageName: 'Acme.Tool' })).toMatchObject([
      { executionPhase: 'upload', outcome: 'allowed' },
    ])
    expect(await (await read(`${index['PackageBaseAddress/3.0.0']}acme.tool/index.json`)).json()).toEqual({
      versions: ['1.0.0'],
    })
  })

  it('blocks a push with the rule in the reason phrase; nothing reaches the feed', async () => {
    const response = await push(nupkg('Reserved.Thing', '1.0.0'))
    expect(response.status).toBe(403)
    expect(response.statusText).toContain('up-block')
    expect(upstream.versions.has('reserved.thing')).toBe(false)
    const [event] = (await proxy.events('firewall.blocked')).filter((e) => e.data.packageName === 'Reserved.Thing')
    expect(event.data).toMatchObject({ executionPhase: 'upload', rule: 'up-block', upstream: 'internal-feed' })
  })

  it('lets an excepted push through', async () => {
    expect((await push(nupkg('Reserved.Ok', '1.0.0'))).status).toBe(201)
    const types = (await proxy.events()).filter((e) => e.data.packageName === 'Reserved.Ok').map((e) => e.type)
    expect(types).toEqual(['firewall.exception-allowed', 'package.published'])
  })

  it('forwards an unlist (DELETE) and emits package.unlisted', async () => {
    const response = await fetch(`${index['PackagePublish/2.0.0']}/Acme.Tool/1.0.0`, {
      method: 'DELETE',
      headers: { 'x-nuget-apikey': token },
    })
    expect(response.status).toBe(204)
    expect(upstream.versions.get('acme.tool')![0].listed).toBe(false)
    const [event] = await proxy.events('package.unlisted')
    expect(event.data).toMatchObject({
      firewall: 'nu',
      ecosystem: 'nuget',
      packageName: 'Acme.Tool',
      version: '1.0.0',
      upstream: 'internal-feed',
      actor: { userId: 'owner' },
    })
  })
})
