import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startMavenUpstream, type MavenUpstream } from '../support/maven-upstream'

// CONTRACT section 8, "decide on what is forwarded": a deploy path must be the layout path of
// the coordinates it is judged as; otherwise 400 and nothing forwarded.

let upstream: MavenUpstream
let proxy: ProxyHarness
let token: string
let base: string

beforeAll(async () => {
  upstream = await startMavenUpstream({ password: 'deployer-secret' })
  proxy = await startProxy({ backend: 'redis' })
  await proxy.putFirewall('mvn', {
    ecosystem: 'maven',
    upstreams: [
      {
        id: 'internal-mvn',
        endpoint: upstream.url,
        credentials: { username: 'deployer', password: 'deployer-secret' },
        internal: true,
      },
    ],
    rules: [
      {
        id: 'no-lib-2',
        executionPhase: 'upload',
        selector: { function: { name: 'versionRange', package: 'org.acme:lib', range: '>=2.0' } },
        description: 'lib 2 is not to be deployed',
      },
    ],
  })
  token = await proxy.token('owner')
  base = proxy.registryUrl('mvn')
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

const put = (path: string, body: string) =>
  fetch(`${base}${path}`, {
    method: 'PUT',
    headers: {
      authorization: `Basic ${Buffer.from(`ci:${token}`).toString('base64')}`,
      'content-type': 'application/octet-stream',
    },
    body,
  })

describe('Maven deploy: the path must be the layout path of what is judged', () => {
  it('refuses lib-2.0.jar in lib/1.0/ (judged as 1.0, the >=2.0 rule would block it): 400 naming both', async () => {
    const before = upstream.puts.length
    for (const file of ['lib-2.0.jar', 'lib-2.0.jar.sha1', 'lib-2.0.jar.asc', 'lib-10.jar']) {
      const response = await put(`org/acme/lib/1.0/${file}`, 'bytes')
      expect(response.status).toBe(400)
      expect(response.statusText).toContain(file)
      expect(await response.json()).toMatchObject({
        status: 400,
        code: 'upload_version_mismatch',
        declared: 'org.acme:lib:1.0',
        found: file,
      })
    }
    expect(upstream.puts.length).toBe(before)
    expect(await proxy.log('mvn', { packageName: 'org.acme:lib' })).toEqual([])
  })

  it('refuses a file named for another artifact than its directory', async () => {
    const before = upstream.puts.length
    const response = await put('org/acme/lib/1.0/evil-1.0.jar', 'bytes')
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({
      code: 'upload_name_mismatch',
      declared: 'org.acme:lib:1.0',
      found: 'evil-1.0.jar',
    })
    expect(upstream.puts.length).toBe(before)
  })

  it('refuses segments that would reach another path upstream (query, fragment, dotted group, backslash)', async () => {
    const before = upstream.puts.length
    for (const path of [
      'org/acme/lib%3F/1.0/lib%3F-1.0.jar',
      'org/acme/lib%23x/1.0/lib%23x-1.0.jar',
      'org.evil/lib/1.0/lib-1.0.jar',
      'org/acme/lib/1.0/..%5Clib-1.0.jar',
    ]) {
      const response = await put(path, 'bytes')
      expect(response.status, path).toBe(400)
      expect(await response.json()).toMatchObject({ code: 'upload_file_name_invalid' })
    }
    expect(upstream.puts.length).toBe(before)
  })

  it('refuses maven-metadata.xml that names other coordinates than its path', async () => {
    const before = upstream.puts.length
    const response = await put(
      'org/acme/lib/maven-metadata.xml',
      '<metadata><groupId>org.evil</groupId><artifactId>lib</artifactId><versioning><versions><version>1.0</version></versions></versioning></metadata>',
    )
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({
      code: 'upload_name_mismatch',
      declared: 'org.acme',
      found: 'org.evil',
    })
    const snapshot = await put(
      'org/acme/lib/1.1-SNAPSHOT/maven-metadata.xml',
      '<metadata><groupId>org.acme</groupId><artifactId>lib</artifactId><version>2.0-SNAPSHOT</version></metadata>',
    )
    expect(await snapshot.json()).toMatchObject({
      code: 'upload_version_mismatch',
      declared: '1.1-SNAPSHOT',
      found: '2.0-SNAPSHOT',
    })
    expect(upstream.puts.length).toBe(before)
  })

  it('deploys matching files: classifier, checksum, signature, unique and plain snapshot names', async () => {
    for (const path of [
      'org/acme/lib/1.0/lib-1.0.jar',
      'org/acme/lib/1.0/lib-1.0-sources.jar',
      'org/acme/lib/1.0/lib-1.0.jar.sha1',
      'org/acme/lib/1.0/lib-1.0.jar.asc.md5',
      'org/acme/tool/1.1-SNAPSHOT/tool-1.1-20240101.120000-1.jar',
      'org/acme/tool/1.1-SNAPSHOT/tool-1.1-SNAPSHOT.pom',
    ]) {
      expect((await put(path, 'bytes')).status, path).toBe(201)
      expect(upstream.puts.at(-1)).toBe(path)
    }
    const documents: [string, string][] = [
      [
        'org/acme/lib/maven-metadata.xml',
        '<metadata><groupId>org.acme</groupId><artifactId>lib</artifactId><versioning><versions><version>1.0</version></versions></versioning></metadata>',
      ],
      [
        'org/acme/tool/1.1-SNAPSHOT/maven-metadata.xml',
        '<metadata><groupId>org.acme</groupId><artifactId>tool</artifactId><version>1.1-SNAPSHOT</version></metadata>',
      ],
      // Group-level plugin metadata names no coordinates.
      [
        'org/acme/plugins/maven-metadata.xml',
        '<metadata><plugins><plugin><prefix>x</prefix></plugin></plugins></metadata>',
      ],
    ]
    for (const [path, xml] of documents) {
      expect((await put(path, xml)).status, path).toBe(201)
      expect(upstream.puts.at(-1)).toBe(path)
    }
  })
})
