import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { startProxy, type ProxyHarness } from './harness'
import { npmClient, publishFixtures, writePackage, type NpmClient } from './npm-cli'

const ADVISORY_DIR = join(__dirname, '..', 'fixtures', 'advisories')

let registry: Verdaccio
let proxy: ProxyHarness
let client: NpmClient

beforeAll(async () => {
  registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, [{ name: 'fw-vuln', version: '1.0.0', license: 'MIT' }])
  proxy = await startProxy({ backend: 'redis', advisoryDir: ADVISORY_DIR })
  await proxy.putFirewall('pub', {
    upstreams: [
      {
        id: 'internal-reg',
        endpoint: registry.url,
        credentials: { token: registry.token },
        internal: true,
        cached: true,
      },
    ],
    rules: [
      {
        id: 'upload-block',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['fw-forbidden-*'] } },
        description: 'fw-forbidden-* names are reserved',
      },
    ],
  })
  client = npmClient(proxy.registryUrl('pub'), await proxy.token('owner'))
})

afterAll(async () => {
  await proxy?.close()
  await registry?.stop()
})

const upstreamDoc = async (name: string) => {
  const response = await fetch(`${registry.url}/${name}`)
  return { status: response.status, body: response.status === 200 ? ((await response.json()) as any) : null }
}

describe('npm publish through the firewall', () => {
  it('forwards a publish to the publish-target upstream and emits package.published', async () => {
    const dir = writePackage(client.dir, { name: 'fw-new-pub', version: '1.0.0', license: 'MIT' })
    const result = await client.npm(['publish'], dir)
    expect(result.code, result.output).toBe(0)
    expect((await upstreamDoc('fw-new-pub')).body['dist-tags'].latest).toBe('1.0.0')
    const [event] = await proxy.events('package.published')
    expect(event.data).toMatchObject({
      firewall: 'pub',
      ecosystem: 'npm',
      packageName: 'fw-new-pub',
      version: '1.0.0',
      upstream: 'internal-reg',
      actor: { userId: 'owner' },
    })
    expect(await proxy.log('pub', { packageName: 'fw-new-pub' })).toMatchObject([
      { executionPhase: 'upload', blocked: false, upstream: 'internal-reg' },
    ])
    // The packument cache was invalidated: the new version is visible at once.
    expect((await client.npm(['view', 'fw-new-pub', 'version'])).output.trim()).toBe('1.0.0')
  })

  it('blocks a publish with an upload rule: 403 printed by npm, nothing reaches the upstream', async () => {
    const dir = writePackage(client.dir, { name: 'fw-forbidden-thing', version: '1.0.0', license: 'MIT' })
    const result = await client.npm(['publish'], dir)
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('403')
    expect(result.output).toContain('upload-block')
    expect(result.output).toContain('fw-forbidden-* names are reserved')
    expect((await upstreamDoc('fw-forbidden-thing')).status).toBe(404)
    const [event] = (await proxy.events('firewall.blocked')).filter((e) => e.data.packageName === 'fw-forbidden-thing')
    expect(result.output).toContain(event.data.request)
    expect(event.data).toMatchObject({
      executionPhase: 'upload',
      blocked: true,
      rule: 'upload-block',
      upstream: 'internal-reg',
      version: '1.0.0',
    })
    expect((await proxy.events('package.published')).map((e) => e.data.packageName)).not.toContain('fw-forbidden-thing')
  })

  it('forwards dist-tag writes and deprecations to the publish target', async () => {
    const tag = await client.npm(['dist-tag', 'add', 'fw-new-pub@1.0.0', 'beta'])
    expect(tag.code, tag.output).toBe(0)
    expect((await upstreamDoc('fw-new-pub')).body['dist-tags'].beta).toBe('1.0.0')
    expect((await client.npm(['dist-tag', 'ls', 'fw-new-pub'])).output).toContain('beta: 1.0.0')
    const deprecate = await client.npm(['deprecate', 'fw-new-pub@1.0.0', 'superseded'])
    expect(deprecate.code, deprecate.output).toBe(0)
    expect((await upstreamDoc('fw-new-pub')).body.versions['1.0.0'].deprecated).toBe('superseded')
  })

  it('answers ping and whoami with the principal id', async () => {
    expect((await client.npm(['ping'])).code).toBe(0)
    expect((await client.npm(['whoami'])).output.trim()).toBe('owner')
  })

  it('merges the firewall advisory data into bulk advisories', async () => {
    const response = await fetch(`${proxy.registryUrl('pub')}-/npm/v1/security/advisories/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await proxy.token('owner')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ 'fw-vuln': ['1.0.0'], 'fw-new-pub': ['1.0.0'] }),
    })
    expect(response.status).toBe(200)
    const body = (await response.json()) as any
    expect(body['fw-vuln']).toMatchObject([
      { id: 'GHSA-fwvu-lnxx-0001', severity: 'high', vulnerable_versions: '<1.1.0' },
    ])
    expect(body['fw-new-pub']).toBeUndefined()
  })

  it('runs npm audit against the firewall and reports the OSV advisory', async () => {
    const audit = npmClient(proxy.registryUrl('pub'), await proxy.token('owner'))
    expect((await audit.npm(['install', 'fw-vuln'])).code).toBe(0)
    const result = await audit.npm(['audit', '--audit'])
    expect(result.output).toContain('GHSA-fwvu-lnxx-0001')
  })
})
