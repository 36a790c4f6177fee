import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startNugetUpstream, type NugetUpstream } from '../support/nuget-upstream'
import { nupkg } from '../fixtures/ecosystems/packages'
import { zip } from '../fixtures/ecosystems/zip'

// CONTRACT section 8, "decide on what is forwarded": a push is judged on the identity the feed
// will read from the package's nuspec; an ambiguous or mismatched package is 400, nothing forwarded.

let upstream: NugetUpstream
let proxy: ProxyHarness
let token: string

beforeAll(async () => {
  upstream = await startNugetUpstream({ apiKey: 'feed-key' })
  proxy = await startProxy({ backend: 'redis' })
  await proxy.putFirewall('nu', {
    ecosystem: 'nuget',
    upstreams: [{ id: 'internal-feed', endpoint: upstream.index, credentials: { token: 'feed-key' }, internal: true }],
    rules: [
      {
        id: 'up-block',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['Reserved.*'] } },
        description: 'Reserved.* ids are reserved',
      },
    ],
  })
  token = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

/** A nuspec document with the given metadata elements written as they are. */
const nuspec = (metadata: string) =>
  `<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd">\n  <metadata>\n${metadata}\n    <authors>tests</authors>\n    <description>fixture</description>\n  </metadata>\n</package>\n`

/** `nuget push`'s request: PUT multipart with the package as a file part. */
function push(files: { bytes: Buffer; filename?: string }[]): Promise<Response> {
  const form = new FormData()
  for (const file of files)
    form.append('package', new Blob([new Uint8Array(file.bytes)]), file.filename ?? 'package.nupkg')
  return fetch(`${proxy.registryUrl('nu')}api/v2/package`, {
    method: 'PUT',
    headers: { 'x-nuget-apikey': token, 'x-nuget-protocol-version': '4.1.0' },
    body: form,
  })
}

describe('NuGet push: judged on the nuspec the feed reads', () => {
  it('refuses an id hidden from a regular expression by a comment: 400 naming both, nothing reaches the feed', async () => {
    const before = upstream.pushes.length
    const bytes = zip({
      'Good.Pkg.nuspec': nuspec(
        '    <!-- <id>Good.Pkg</id> -->\n    <id>Reserved.X</id>\n    <version>1.0.0</version>',
      ),
      'lib/netstandard2.0/_._': '',
    })
    const response = await push([{ bytes }])
    expect(response.status).toBe(400)
    expect(response.statusText).toContain('Reserved.X')
    expect(response.statusText).toContain('Good.Pkg')
    expect(await response.json()).toMatchObject({
      status: 400,
      code: 'upload_name_mismatch',
      declared: 'Reserved.X',
      found: 'Good.Pkg',
    })
    expect(upstream.pushes.length).toBe(before)
  })

  it('judges the id the XML means (character reference, CDATA): the rule blocks it', async () => {
    const before = upstream.pushes.length
    for (const id of ['Reserved&#46;Y', '<![CDATA[Reserved.Y]]>']) {
      const bytes = zip({ 'Reserved.Y.nuspec': nuspec(`    <id>${id}</id>\n    <version>1.0.0</version>`) })
      const response = await push([{ bytes }])
      expect(response.status).toBe(403)
      expect(response.statusText).toContain('up-block')
    }
    expect(upstream.pushes.length).toBe(before)
  })

  it('refuses packages the feed could read otherwise: two manifests, two ids, two packages', async () => {
    const before = upstream.pushes.length
    const twoManifests = zip({
      'Good.Pkg.nuspec': nuspec('    <id>Good.Pkg</id>\n    <version>1.0.0</version>'),
      'Reserved.X.nuspec': nuspec('    <id>Reserved.X</id>\n    <version>1.0.0</version>'),
    })
    const twoIds = zip({
      'Good.Pkg.nuspec': nuspec('    <id>Good.Pkg</id>\n    <id>Reserved.X</id>\n    <version>1.0.0</version>'),
    })
    for (const files of [
      [{ bytes: twoManifests }],
      [{ bytes: twoIds }],
      [{ bytes: nupkg('Good.Pkg', '1.0.0') }, { bytes: nupkg('Reserved.X', '1.0.0') }],
    ]) {
      const response = await push(files)
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ code: 'upload_ambiguous' })
    }
    expect(upstream.pushes.length).toBe(before)
  })

  it('refuses a package file name with a path separator or dot segment', async () => {
    const before = upstream.pushes.length
    for (const filename of ['../package.nupkg', '..']) {
      const response = await push([{ bytes: nupkg('Good.Pkg', '1.0.0'), filename }])
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ code: 'upload_file_name_invalid', found: filename })
    }
    expect(upstream.pushes.length).toBe(before)
  })

  it('pushes a matching package as judged: NuGet-normalised version, id case as declared', async () => {
    const before = upstream.pushes.length
    const response = await push([{ bytes: nupkg('Acme.Ident', '1.0') }])
    expect(response.status).toBe(201)
    expect(upstream.pushes.length).toBe(before + 1)
    expect(upstream.versions.get('acme.ident')?.map((v) => v.version)).toEqual(['1.0'])
    const [event] = (await proxy.events('package.published')).filter((e) => e.data.packageName === 'Acme.Ident')
    expect(event.data).toMatchObject({ ecosystem: 'nuget', version: '1.0.0', upstream: 'internal-feed' })
  })
})
