import { eventually as readUntil } from '../support/wait-for'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type ProxyHarness } from './harness'
import { send, startLoopback, type Loopback } from '../support/loopback'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { freePort } from '../support/server'
import { nupkg, wheel } from '../fixtures/ecosystems/packages'
import { startNugetUpstream, type NugetUpstream } from '../support/nuget-upstream'

/** Failed upstream calls are firewall log entries of their own, never events. */

let proxy: ProxyHarness
let nuget: NugetUpstream
let broken: Loopback
let pypi: PypiUpstream
let token: string
let closedPort: number

beforeAll(async () => {
  broken = await startLoopback((_req, res) => send(res, 500, 'upstream exploded'))
  pypi = await startPypiUpstream()
  const { filename, bytes } = wheel('fw-demo', '1.0')
  pypi.add('fw-demo', filename, bytes)
  closedPort = await freePort()
  nuget = await startNugetUpstream({ apiKey: 'feed-key' })
  nuget.add('Acme.Core', '1.0.0', nupkg('Acme.Core', '1.0.0'))
  nuget.brokenRegistrations.add('acme.core')
  proxy = await startProxy({ backend: 'fs' })
  await proxy.putFirewall('nu-reg', { ecosystem: 'nuget', upstreams: [{ id: 'feed', endpoint: nuget.index }] })
  await proxy.putFirewall('npm-500', { upstreams: [{ id: 'broken', endpoint: broken.url }] })
  await proxy.putFirewall('npm-down', { upstreams: [{ id: 'nobody', endpoint: `http://127.0.0.1:${closedPort}` }] })
  await proxy.putFirewall('py-skip', {
    ecosystem: 'pypi',
    upstreams: [
      { id: 'nobody', endpoint: `http://127.0.0.1:${closedPort}/` },
      { id: 'local', endpoint: pypi.url },
    ],
  })
  token = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await broken?.close()
  await pypi?.close()
  await nuget?.close()
})

const get = (url: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } })

const eventually = <T>(read: () => Promise<T | undefined>) =>
  readUntil(read, { timeoutMs: 5_000, what: 'the log entry', intervalMs: 50 }) as Promise<T>

describe('upstream failures in the firewall log', () => {
  it('records an upstream answering 500 as an upstream_error entry and no event', async () => {
    const response = await get(`${proxy.registryUrl('npm-500')}left-pad`)
    expect(response.status).toBe(503)
    const requestId = response.headers.get('x-request-id')!
    expect(await proxy.log('npm-500')).toMatchObject([
      {
        outcome: 'upstream_error',
        blocked: false,
        firewall: 'npm-500',
        ecosystem: 'npm',
        upstream: 'broken',
        reason: 'status 500',
        request: requestId,
        user: 'owner',
        method: 'GET',
        path: '/registry/acme/npm-500/left-pad',
      },
    ])
    expect((await proxy.events()).filter((e) => JSON.stringify(e).includes(requestId))).toEqual([])
    // The request id of the 503 finds it, and a package filter does not (it names no package).
    expect(await proxy.log('npm-500', { requestId })).toHaveLength(1)
    expect(await proxy.log('npm-500', { packageName: 'left-pad' })).toEqual([])
  })

  it('records a refused connection', async () => {
    const response = await get(`${proxy.registryUrl('npm-down')}left-pad`)
    expect(response.status).toBe(503)
    const [entry] = await proxy.log('npm-down')
    expect(entry).toMatchObject({
      outcome: 'upstream_error',
      upstream: 'nobody',
      request: response.headers.get('x-request-id'),
    })
    expect((entry as { reason: string }).reason).toMatch(/ECONNREFUSED/)
  })

  it('records a public upstream skipped on the way to one that answered', async () => {
    const response = await get(`${proxy.registryUrl('py-skip')}simple/fw-demo/`)
    expect(response.status).toBe(200)
    const requestId = response.headers.get('x-request-id')!
    // Written after the answer went out (the request did not fail): read until it is there.
    const entries = await eventually(async () => {
      const found = await proxy.log('py-skip', { requestId })
      return found.length ? found : undefined
    })
    expect(entries).toMatchObject([{ outcome: 'upstream_error', upstream: 'nobody', ecosystem: 'pypi' }])
  })

  it('records a failed fact lookup (a NuGet registration answering 500) that refused the download', async () => {
    const index = (await (await get(`${proxy.registryUrl('nu-reg')}v3/index.json`)).json()) as {
      resources: { '@id': string; '@type': string }[]
    }
    const flat = index.resources.find((resource) => resource['@type'] === 'PackageBaseAddress/3.0.0')!['@id']
    const response = await get(`${flat}acme.core/1.0.0/acme.core.1.0.0.nupkg`)
    expect(response.status).toBe(503)
    expect(((await response.json()) as { error: string }).error).toContain('registration')
    const requestId = response.headers.get('x-request-id')!
    expect(await proxy.log('nu-reg', { requestId })).toMatchObject([
      { outcome: 'upstream_error', upstream: 'feed', ecosystem: 'nuget', reason: 'status 500', request: requestId },
    ])
  })
})
