import { readdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from '../registry/harness'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { wheel } from '../fixtures/ecosystems/packages'
import { pip } from './pip'

let upstream: PypiUpstream
let proxy: ProxyHarness
let token: string

const RULES = [
  {
    id: 'dl-block',
    executionPhase: 'download',
    selector: { function: { name: 'packageName', patterns: ['fw-evil*'] } },
    description: 'fw-evil* packages are banned',
  },
  {
    id: 'hide-2',
    executionPhase: 'versions',
    selector: { function: { name: 'versionRange', package: 'fw-demo', range: '>=2.0' } },
    description: 'fw-demo 2 is not approved yet',
  },
  {
    id: 'up-block',
    executionPhase: 'upload',
    selector: { function: { name: 'packageName', patterns: ['fw-reserved-*'] } },
    description: 'fw-reserved-* names are reserved',
  },
]
const EXCEPTIONS = [
  { id: 'ex-dl', rule: 'dl-block', selector: { packageName: 'fw-evil-ok' }, reason: 'false_positive' },
  {
    id: 'ex-up',
    rule: 'up-block',
    selector: { packageName: 'fw-reserved-ok', version: '1.0' },
    reason: 'internal_package',
  },
]

beforeAll(async () => {
  upstream = await startPypiUpstream({ password: 'upstream-secret' })
  for (const [name, version] of [
    ['fw-demo', '1.0'],
    ['fw-demo', '2.0'],
    ['fw-evil', '1.0'],
    ['fw-evil-ok', '1.0'],
  ]) {
    const { filename, bytes } = wheel(name, version)
    upstream.add(name, filename, bytes)
  }
  proxy = await startProxy({ backend: 'redis' })
  await proxy.putFirewall('py', {
    ecosystem: 'pypi',
    upstreams: [
      {
        id: 'internal-py',
        endpoint: upstream.url,
        credentials: { username: 'ci', password: 'upstream-secret' },
        internal: true,
      },
    ],
    rules: RULES,
    exceptions: EXCEPTIONS,
  })
  token = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await upstream?.close()
})

const auth = () => ({ authorization: `Basic ${Buffer.from(`__token__:${token}`).toString('base64')}` })

/** A twine-shaped legacy upload (https://warehouse.pypa.io/api-reference/legacy.html). */
function twineForm(name: string, version: string): FormData {
  const { filename, bytes } = wheel(name, version)
  const form = new FormData()
  for (const [key, value] of Object.entries({
    ':action': 'file_upload',
    protocol_version: '1',
    metadata_version: '2.1',
    name,
    version,
    filetype: 'bdist_wheel',
    pyversion: 'py3',
    license_expression: 'MIT',
  }))
    form.append(key, value)
  form.append('content', new Blob([new Uint8Array(bytes)]), filename)
  return form
}

describe('PyPI simple index through the firewall', () => {
  it('serves PEP 691 JSON by Accept with file URLs on the proxy and hidden versions removed', async () => {
    const response = await fetch(`${proxy.registryUrl('py')}simple/FW_Demo/`, {
      headers: { ...auth(), accept: 'application/vnd.pypi.simple.v1+json' },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/vnd.pypi.simple.v1+json')
    expect(response.headers.get('vary')).toBe('Accept')
    const doc = (await response.json()) as any
    expect(doc.files.map((f: any) => f.filename)).toEqual(['fw_demo-1.0-py3-none-any.whl'])
    expect(doc.files[0].url).toBe(`${proxy.registryUrl('py')}files/fw-demo/fw_demo-1.0-py3-none-any.whl`)
    expect(doc.files[0].hashes.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(doc.versions).toEqual(['1.0'])
  })

  it('serves PEP 503 HTML by default, and metadata filtering writes no log entries or events', async () => {
    const response = await fetch(`${proxy.registryUrl('py')}simple/fw-demo/`, { headers: auth() })
    expect(response.headers.get('content-type')).toBe('text/html')
    const html = await response.text()
    expect(html).toContain(`href="${proxy.registryUrl('py')}files/fw-demo/fw_demo-1.0-py3-none-any.whl#sha256=`)
    expect(html).not.toContain('2.0')
    expect(await proxy.log('py', { packageName: 'fw-demo' })).toEqual([])
  })

  it('asks for credentials with a Basic challenge', async () => {
    const response = await fetch(`${proxy.registryUrl('py')}simple/fw-demo/`)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('Basic')
  })
})

describe('pip through the firewall', () => {
  it('downloads the newest visible version and logs the download decision', async () => {
    const result = await pip(proxy.registryUrl('py'), token, ['download', 'fw-demo'])
    expect(result.code, result.output).toBe(0)
    expect(readdirSync(result.dir)).toEqual(['fw_demo-1.0-py3-none-any.whl'])
    expect(await proxy.log('py', { packageName: 'fw-demo' })).toMatchObject([
      { executionPhase: 'download', outcome: 'allowed', version: '1.0', upstream: 'internal-py' },
    ])
  })

  it('cannot get a version hidden by a versions rule', async () => {
    const result = await pip(proxy.registryUrl('py'), token, ['download', 'fw-demo==2.0'])
    expect(result.code).not.toBe(0)
    expect(result.output).toMatch(/No matching distribution found for fw-demo==2.0/)
  })

  it('is refused a blocked download, and pip prints the rule and the request id', async () => {
    const result = await pip(proxy.registryUrl('py'), token, ['download', 'fw-evil'])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('403')
    expect(result.output).toContain('dl-block')
    expect(result.output).toContain('fw-evil* packages are banned')
    const [event] = (await proxy.events('firewall.blocked')).filter((e) => e.data.packageName === 'fw-evil')
    expect(event.data).toMatchObject({
      ecosystem: 'pypi',
      executionPhase: 'download',
      blocked: true,
      rule: 'dl-block',
      version: '1.0',
      upstream: 'internal-py',
      user: 'owner',
    })
    expect(result.output).toContain(event.data.request)
    expect(await proxy.log('py', { packageName: 'fw-evil' })).toMatchObject([
      { outcome: 'blocked', rule: 'dl-block', request: event.data.request },
    ])
  })

  it('gets a package an exception lets through, with a firewall.exception-allowed event', async () => {
    const result = await pip(proxy.registryUrl('py'), token, ['download', 'fw-evil-ok'])
    expect(result.code, result.output).toBe(0)
    const [event] = (await proxy.events('firewall.exception-allowed')).filter(
      (e) => e.data.packageName === 'fw-evil-ok',
    )
    expect(event.data).toMatchObject({
      rule: 'dl-block',
      exception: 'ex-dl',
      executionPhase: 'download',
      blocked: false,
    })
    expect(await proxy.log('py', { packageName: 'fw-evil-ok' })).toMatchObject([
      { outcome: 'exception-allowed', exception: 'ex-dl' },
    ])
  })
})

describe('PyPI legacy upload through the firewall', () => {
  it('forwards an upload to the publish target and emits package.published with the file', async () => {
    const response = await fetch(`${proxy.registryUrl('py')}legacy/`, {
      method: 'POST',
      headers: auth(),
      body: twineForm('fw-new', '0.1'),
    })
    expect(response.status).toBe(200)
    expect(upstream.uploads.at(-1)).toMatchObject({
      filename: 'fw_new-0.1-py3-none-any.whl',
      fields: { name: 'fw-new', version: '0.1' },
    })
    const [event] = (await proxy.events('package.published')).filter((e) => e.data.packageName === 'fw-new')
    expect(event.data).toMatchObject({
      firewall: 'py',
      ecosystem: 'pypi',
      version: '0.1',
      upstream: 'internal-py',
      file: 'legacy/',
      actor: { userId: 'owner' },
    })
    expect(await proxy.log('py', { packageName: 'fw-new' })).toMatchObject([
      { executionPhase: 'upload', outcome: 'allowed' },
    ])
    // The uploaded file is installable through the firewall at once (no stale index).
    const result = await pip(proxy.registryUrl('py'), token, ['download', 'fw-new'])
    expect(result.code, result.output).toBe(0)
  })

  it('refuses a blocked upload with the rule in the status line; nothing reaches the upstream', async () => {
    const before = upstream.uploads.length
    const response = await fetch(`${proxy.registryUrl('py')}legacy/`, {
      method: 'POST',
      headers: auth(),
      body: twineForm('fw-reserved-x', '1.0'),
    })
    expect(response.status).toBe(403)
    // twine prints the reason phrase.
    expect(response.statusText).toContain('up-block')
    expect(response.statusText).toContain('fw-reserved-* names are reserved')
    expect(upstream.uploads.length).toBe(before)
    const [event] = (await proxy.events('firewall.blocked')).filter((e) => e.data.packageName === 'fw-reserved-x')
    expect(event.data).toMatchObject({ executionPhase: 'upload', rule: 'up-block', upstream: 'internal-py' })
    expect(response.statusText).toContain(event.data.request)
  })

  it('lets an upload through by exception, with both events', async () => {
    const response = await fetch(`${proxy.registryUrl('py')}legacy/`, {
      method: 'POST',
      headers: auth(),
      body: twineForm('fw-reserved-ok', '1.0.0'),
    })
    expect(response.status).toBe(200)
    const types = (await proxy.events()).filter((e) => e.data.packageName === 'fw-reserved-ok').map((e) => e.type)
    expect(types).toEqual(['firewall.exception-allowed', 'package.published'])
  })
})
