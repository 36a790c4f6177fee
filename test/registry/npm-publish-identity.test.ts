import { createHash } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy'
import { startProxy, type ProxyHarness } from './harness'
import { npmClient, runNpm, writePackage, type NpmClient } from './npm-cli'

// CONTRACT section 8, "decide on what is forwarded": an npm publish body must name the URL's
// package, and each versions key its manifest's version; otherwise 400 and nothing forwarded.

let registry: Verdaccio
let tap: RecordingProxy
let proxy: ProxyHarness
let client: NpmClient
let token: string

beforeAll(async () => {
  registry = await startVerdaccio()
  tap = await startRecordingProxy(registry.url)
  proxy = await startProxy({ backend: 'redis' })
  await proxy.putFirewall('pub', {
    upstreams: [{ id: 'internal-reg', endpoint: tap.url, credentials: { token: registry.token }, internal: true }],
    rules: [
      {
        id: 'no-evil',
        executionPhase: 'upload',
        selector: { function: { name: 'packageName', patterns: ['evil-*'] } },
        description: 'evil-* names are reserved',
      },
      {
        id: 'no-ranged-2',
        executionPhase: 'upload',
        selector: { function: { name: 'versionRange', package: 'fw-ranged', range: '>=2.0.0' } },
        description: 'fw-ranged 2 is not to be published',
      },
    ],
  })
  token = await proxy.token('owner')
  client = npmClient(proxy.registryUrl('pub'), token)
}, 120_000)

afterAll(async () => {
  await proxy?.close()
  await tap?.close()
  await registry?.stop()
})

/** A tarball made by `npm pack` of a fixture package. */
async function packed(name: string, version: string): Promise<Buffer> {
  const dir = writePackage(client.dir, { name, version, license: 'MIT' })
  const result = await runNpm(['pack', '--ignore-scripts'], dir)
  expect(result.code, result.output).toBe(0)
  const file = readdirSync(dir).find((f) => f.endsWith('.tgz'))!
  return readFileSync(join(dir, file))
}

/** The document libnpmpublish sends for one version (what `npm publish` PUTs). */
async function publishBody(name: string, version: string): Promise<Record<string, any>> {
  const tarball = await packed(name, version)
  const file = `${name}-${version}.tgz`
  return {
    _id: name,
    name,
    description: `fixture ${name}`,
    'dist-tags': { latest: version },
    versions: {
      [version]: {
        name,
        version,
        license: 'MIT',
        _id: `${name}@${version}`,
        dist: {
          integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
          shasum: createHash('sha1').update(tarball).digest('hex'),
          tarball: `${proxy.registryUrl('pub')}${name}/-/${file}`,
        },
      },
    },
    access: null,
    _attachments: {
      [file]: { content_type: 'application/octet-stream', data: tarball.toString('base64'), length: tarball.length },
    },
  }
}

function put(path: string, body: unknown): Promise<Response> {
  return fetch(`${proxy.registryUrl('pub')}${path}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

const writes = () => tap.requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD')
const upstreamHas = async (name: string) => (await fetch(`${registry.url}/${name.replace('/', '%2f')}`)).status === 200

describe('npm publish: the body must name what the URL names', () => {
  it('refuses PUT /good1 whose body names evil-x: 400 naming both, nothing reaches the upstream', async () => {
    const before = writes().length
    const response = await put('good1', await publishBody('evil-x', '1.0.0'))
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    const problem = (await response.json()) as Record<string, any>
    expect(problem).toMatchObject({ status: 400, code: 'upload_name_mismatch', declared: 'good1', found: 'evil-x' })
    expect(problem.error).toContain('good1')
    expect(problem.error).toContain('evil-x')
    expect(writes().length).toBe(before)
    expect(await upstreamHas('good1')).toBe(false)
    expect(await upstreamHas('evil-x')).toBe(false)
    // Refused before the decision: no log entry, no event.
    expect(await proxy.log('pub', { packageName: 'good1' })).toEqual([])
    expect((await proxy.events()).filter((e) => e.data.packageName === 'good1')).toEqual([])
  })

  it('refuses a versions key 1.0.0 holding version 2.0.0, which the >=2.0.0 rule would block', async () => {
    const body = await publishBody('fw-ranged', '2.0.0')
    body.versions = { '1.0.0': body.versions['2.0.0'] }
    body['dist-tags'] = { latest: '1.0.0' }
    const before = writes().length
    const response = await put('fw-ranged', body)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ code: 'upload_version_mismatch', declared: '1.0.0', found: '2.0.0' })
    expect(writes().length).toBe(before)
    expect(await upstreamHas('fw-ranged')).toBe(false)
  })

  it('refuses an _id, a manifest name or an attachment name that differ from the package', async () => {
    const before = writes().length
    const idBody = { ...(await publishBody('fw-plain', '1.0.0')), _id: 'evil-y' }
    expect(await (await put('fw-plain', idBody)).json()).toMatchObject({
      code: 'upload_name_mismatch',
      declared: 'fw-plain',
      found: 'evil-y',
    })
    const manifestBody = await publishBody('fw-plain', '1.0.0')
    manifestBody.versions['1.0.0'].name = 'evil-z'
    expect(await (await put('fw-plain', manifestBody)).json()).toMatchObject({
      code: 'upload_name_mismatch',
      found: 'evil-z',
    })
    const fileBody = await publishBody('fw-plain', '1.0.0')
    fileBody._attachments = { '../../evil-1.0.0.tgz': fileBody._attachments['fw-plain-1.0.0.tgz'] }
    const response = await put('fw-plain', fileBody)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({
      code: 'upload_file_name_invalid',
      declared: 'fw-plain-1.0.0.tgz',
      found: '../../evil-1.0.0.tgz',
    })
    expect(writes().length).toBe(before)
    expect(await upstreamHas('fw-plain')).toBe(false)
  })

  it('refuses attachments on any other path than PUT /{name}, where they would skip the decision', async () => {
    const before = writes().length
    const response = await put('evil-w/-rev/1-abc', await publishBody('evil-w', '1.0.0'))
    expect(response.status).toBe(400)
    expect(writes().length).toBe(before)
    expect(await upstreamHas('evil-w')).toBe(false)
  })

  it('still publishes with the real npm CLI, unscoped and scoped (attachment @scope/name-version.tgz)', async () => {
    for (const name of ['fw-ident-ok', '@fwscope/ident-ok']) {
      const dir = writePackage(client.dir, { name, version: '1.0.0', license: 'MIT' })
      const result = await client.npm(['publish', '--access=public', '--ignore-scripts'], dir)
      expect(result.code, result.output).toBe(0)
      expect(await upstreamHas(name)).toBe(true)
      const [event] = (await proxy.events('package.published')).filter((e) => e.data.packageName === name)
      expect(event.data).toMatchObject({ packageName: name, version: '1.0.0', upstream: 'internal-reg' })
    }
  })

  it('still publishes a hand-made body that names its package consistently', async () => {
    const response = await put('fw-ranged', await publishBody('fw-ranged', '1.0.0'))
    expect(response.status).toBe(201)
    expect(await upstreamHas('fw-ranged')).toBe(true)
  })
})
