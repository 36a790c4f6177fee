import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startMavenUpstream, type MavenUpstream } from '../support/maven-upstream'
import { hasMaven, mvnDeploy } from './mvn'

let upstream: MavenUpstream
let proxy: ProxyHarness
let token: string
let base: string

const hex = (alg: string, bytes: Buffer | string) => createHash(alg).update(bytes).digest('hex')
const metadata = (g: string, a: string, versions: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<metadata>\n  <groupId>${g}</groupId>\n  <artifactId>${a}</artifactId>\n  <versioning>\n    <latest>${versions.at(-1)}</latest>\n    <release>${versions.at(-1)}</release>\n    <versions>\n${versions.map((v) => `      <version>${v}</version>`).join('\n')}\n    </versions>\n    <lastUpdated>20240101000000</lastUpdated>\n  </versioning>\n</metadata>\n`

function seed(path: string, content: string | Buffer): void {
  const bytes = Buffer.from(content)
  upstream.files.set(path, { bytes, modified: new Date('2020-01-01T00:00:00Z') })
  upstream.files.set(`${path}.sha1`, {
    bytes: Buffer.from(hex('sha1', bytes)),
    modified: new Date('2020-01-01T00:00:00Z'),
  })
}

beforeAll(async () => {
  upstream = await startMavenUpstream({ password: 'deployer-secret' })
  seed('org/acme/core/maven-metadata.xml', metadata('org.acme', 'core', ['1.0', '1.1', '2.0-beta-1', '2.0']))
  for (const v of ['1.0', '1.1', '2.0-beta-1', '2.0']) {
    seed(
      `org/acme/core/${v}/core-${v}.pom`,
      `<project><groupId>org.acme</groupId><artifactId>core</artifactId><version>${v}</version></project>`,
    )
    seed(`org/acme/core/${v}/core-${v}.jar`, `jar ${v}`)
  }
  seed('org/evil/payload/1.0/payload-1.0.jar', 'evil')
  seed('org/evil/approved/1.0/approved-1.0.jar', 'approved')
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
        id: 'dl-block',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['org.evil:*'] } },
        description: 'org.evil is banned',
      },
      {
        id: 'hide-2',
        executionPhase: 'versions',
        selector: { function: { name: 'versionRange', package: 'org.acme:core', range: '>=2.0.0-alpha' } },
        description: 'core 2 is not approved',
      },
      {
        id: 'up-block',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['org.reserved:*'] } },
        description: 'org.reserved is reserved',
      },
    ],
    exceptions: [
      { id: 'ex-dl', rule: 'dl-block', selector: { packageName: 'org.evil:approved' }, reason: 'accepted_risk' },
      { id: 'ex-up', rule: 'up-block', selector: { packageName: 'org.reserved:ok' }, reason: 'internal_package' },
    ],
  })
  token = await proxy.token('owner')
  base = proxy.registryUrl('mvn')
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

const auth = () => ({ authorization: `Basic ${Buffer.from(`ci:${token}`).toString('base64')}` })
const get = (path: string) => fetch(`${base}${path}`, { headers: auth() })
const put = (path: string, body: string | Buffer) =>
  fetch(`${base}${path}`, {
    method: 'PUT',
    headers: { ...auth(), 'content-type': 'application/octet-stream' },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  })

describe('Maven resolution through the firewall (the requests Maven resolver sends)', () => {
  it('filters maven-metadata.xml by versions rules and regenerates its checksums', async () => {
    const response = await get('org/acme/core/maven-metadata.xml')
    const xml = await response.text()
    expect(xml).toContain('<version>1.1</version>')
    expect(xml).not.toContain('2.0')
    expect(xml).toContain('<latest>1.1</latest>')
    expect(xml).toContain('<release>1.1</release>')
    for (const alg of ['md5', 'sha1', 'sha256', 'sha512'])
      expect(await (await get(`org/acme/core/maven-metadata.xml.${alg}`)).text()).toBe(hex(alg, xml))
    expect(await proxy.log('mvn', { packageName: 'org.acme:core' })).toEqual([])
  })

  it('serves pom, jar and their checksums, logging one download decision per artifact file', async () => {
    for (const file of ['core-1.1.pom', 'core-1.1.pom.sha1', 'core-1.1.jar', 'core-1.1.jar.sha1'])
      expect((await get(`org/acme/core/1.1/${file}`)).status).toBe(200)
    expect(await (await get('org/acme/core/1.1/core-1.1.jar')).text()).toBe('jar 1.1')
    const log = await proxy.log('mvn', { packageName: 'org.acme:core' })
    expect(log.map((e) => e.outcome)).toEqual(['allowed', 'allowed', 'allowed'])
    expect(log[0]).toMatchObject({
      ecosystem: 'maven',
      version: '1.1',
      executionPhase: 'download',
      upstream: 'internal-mvn',
      published: '2020-01-01T00:00:00.000Z',
    })
  })

  it('refuses a version hidden from the metadata, as a download decision with an event', async () => {
    const response = await get('org/acme/core/2.0/core-2.0.jar')
    expect(response.status).toBe(403)
    expect(response.statusText).toContain('hide-2')
    expect((await proxy.events('firewall.blocked')).filter((e) => e.data.packageName === 'org.acme:core')).toHaveLength(
      1,
    )
  })

  it('blocks a download with the rule in the status line Maven prints, event and log entry', async () => {
    const response = await get('org/evil/payload/1.0/payload-1.0.jar')
    expect(response.status).toBe(403)
    expect(response.statusText).toContain('dl-block')
    expect(response.statusText).toContain('org.evil is banned')
    const [event] = (await proxy.events('firewall.blocked')).filter((e) => e.data.packageName === 'org.evil:payload')
    expect(event.data).toMatchObject({
      ecosystem: 'maven',
      version: '1.0',
      executionPhase: 'download',
      rule: 'dl-block',
      upstream: 'internal-mvn',
    })
    expect(response.statusText).toContain(event.data.request)
    expect((await get('org/evil/payload/1.0/payload-1.0.jar.sha1')).status).toBe(403)
    expect(await proxy.log('mvn', { packageName: 'org.evil:payload' })).toHaveLength(1)
  })

  it('lets an excepted artifact through with firewall.exception-allowed', async () => {
    expect(await (await get('org/evil/approved/1.0/approved-1.0.jar')).text()).toBe('approved')
    const [event] = (await proxy.events('firewall.exception-allowed')).filter(
      (e) => e.data.packageName === 'org.evil:approved',
    )
    expect(event.data).toMatchObject({ rule: 'dl-block', exception: 'ex-dl' })
  })
})

describe('Maven deploy through the firewall', () => {
  it('deploys with mvn deploy:deploy-file: one package.published per artifact file', async () => {
    if (!(await hasMaven())) return
    const result = await mvnDeploy(base, token, { groupId: 'org.acme', artifactId: 'tool', version: '3.0' })
    expect(result.output).toContain('BUILD SUCCESS')
    expect(upstream.files.has('org/acme/tool/3.0/tool-3.0.jar')).toBe(true)
    expect(upstream.files.get('org/acme/tool/maven-metadata.xml')!.bytes.toString()).toContain('<version>3.0</version>')
    const published = (await proxy.events('package.published')).filter((e) => e.data.packageName === 'org.acme:tool')
    expect(published.map((e) => e.data.file).sort()).toEqual([
      'org/acme/tool/3.0/tool-3.0.jar',
      'org/acme/tool/3.0/tool-3.0.pom',
    ])
    expect(published[0].data).toMatchObject({
      ecosystem: 'maven',
      version: '3.0',
      upstream: 'internal-mvn',
      actor: { userId: 'owner' },
    })
  })

  it('fails mvn deploy of a blocked artifact, Maven showing the rule', async () => {
    if (!(await hasMaven())) return
    const result = await mvnDeploy(base, token, { groupId: 'org.reserved', artifactId: 'thing', version: '1.0' })
    expect(result.output).toContain('BUILD FAILURE')
    expect(result.output).toContain('403')
    expect(result.output).toContain('up-block')
    expect([...upstream.files.keys()].some((p) => p.startsWith('org/reserved/thing'))).toBe(false)
    const [event] = (await proxy.events('firewall.blocked')).filter((e) => e.data.packageName === 'org.reserved:thing')
    expect(event.data).toMatchObject({ executionPhase: 'upload', rule: 'up-block', upstream: 'internal-mvn' })
  })

  it('deploys over HTTP exactly as Maven does, keeping versions the client was not shown', async () => {
    const jar = Buffer.from('core 3')
    const pom = '<project><groupId>org.acme</groupId><artifactId>core</artifactId><version>3.0</version></project>'
    for (const [file, bytes] of [
      ['core-3.0.jar', jar],
      ['core-3.0.pom', Buffer.from(pom)],
    ] as const) {
      expect((await put(`org/acme/core/3.0/${file}`, bytes)).status).toBe(201)
      for (const alg of ['sha1', 'md5'])
        expect((await put(`org/acme/core/3.0/${file}.${alg}`, hex(alg, bytes))).status).toBe(201)
    }
    // The client merges its version into the (filtered) document it read and uploads that.
    const seen = await (await get('org/acme/core/maven-metadata.xml')).text()
    const mine = seen.replace('<version>1.1</version>', '<version>1.1</version>\n      <version>3.0</version>')
    expect((await put('org/acme/core/maven-metadata.xml', mine)).status).toBe(201)
    expect((await put('org/acme/core/maven-metadata.xml.sha1', hex('sha1', mine))).status).toBe(201)
    const stored = upstream.files.get('org/acme/core/maven-metadata.xml')!.bytes.toString()
    for (const v of ['1.0', '1.1', '2.0-beta-1', '2.0', '3.0']) expect(stored).toContain(`<version>${v}</version>`)
    expect(stored).toContain('<latest>3.0</latest>')
    expect(upstream.files.get('org/acme/core/maven-metadata.xml.sha1')!.bytes.toString()).toBe(hex('sha1', stored))
    const published = (await proxy.events('package.published')).filter((e) => e.data.packageName === 'org.acme:core')
    expect(published.map((e) => e.data.file)).toEqual([
      'org/acme/core/3.0/core-3.0.jar',
      'org/acme/core/3.0/core-3.0.pom',
    ])
  })

  it('blocks a PUT with the rule in the status line, and an exception lets one through', async () => {
    const blocked = await put('org/reserved/lib/1.0/lib-1.0.jar', 'x')
    expect(blocked.status).toBe(403)
    expect(blocked.statusText).toContain('org.reserved is reserved')
    expect(upstream.files.has('org/reserved/lib/1.0/lib-1.0.jar')).toBe(false)
    expect((await put('org/reserved/ok/1.0/ok-1.0.jar', 'ok')).status).toBe(201)
    const types = (await proxy.events()).filter((e) => e.data.packageName === 'org.reserved:ok').map((e) => e.type)
    expect(types).toEqual(['firewall.exception-allowed', 'package.published'])
  })
})
