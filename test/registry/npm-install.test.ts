import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INSTALL_FIXTURES } from '../fixtures/npm-packages'
import { setPublishTime, startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { startProxy, type ProxyHarness } from './harness'
import { npmClient, publishFixtures } from './npm-cli'
import { authenticate } from '../../server/auth/authenticate'
import { queryFirewallLog } from '../../server/firewall/log'

const ADVISORY_DIR = join(__dirname, '..', 'fixtures', 'advisories')
const HOUR = 3_600_000

let registry: Verdaccio
let proxy: ProxyHarness
let ownerToken: string

const rule = (
  id: string,
  executionPhase: string,
  fn: Record<string, unknown>,
  description: string,
  ruleEffect = { block: true, log: true },
) => ({
  id,
  executionPhase,
  selector: { function: fn },
  ruleEffect,
  description,
})

const MAIN_RULES = [
  rule(
    'block-name',
    'download',
    { name: 'packageName', patterns: ['fw-blocked-name'] },
    'fw-blocked-name is banned in this organisation',
  ),
  rule('log-scoped', 'download', { name: 'packageName', patterns: ['@fwscope/*'] }, 'log every @fwscope package', {
    block: false,
    log: true,
  }),
  rule(
    'deny-gpl',
    'download',
    { name: 'license', licenseSet: 'ls-copyleft', mode: 'deny' },
    'copyleft licenses are not allowed',
  ),
  rule('no-scripts', 'download', { name: 'installScripts' }, 'packages with install scripts need review'),
  rule('no-deprecated', 'download', { name: 'deprecated' }, 'deprecated packages are not allowed'),
  rule('vuln-high', 'download', { name: 'vulnerability', minSeverity: 'high' }, 'high or critical vulnerabilities'),
  rule('malware', 'download', { name: 'malware' }, 'known malicious packages'),
]

function mainFirewall(exceptions: unknown[] = []) {
  return {
    upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token }, cached: true }],
    rules: MAIN_RULES,
    exceptions,
  }
}

beforeAll(async () => {
  registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, INSTALL_FIXTURES)
  setPublishTime(registry, 'fw-aged', '1.0.0', '2020-01-01T00:00:00.000Z')
  const deprecate = await npmClient(registry.url, registry.token).npm([
    'deprecate',
    'fw-deprecated@1.0.0',
    'use fw-ok instead',
  ])
  if (deprecate.code !== 0) throw new Error(deprecate.output)

  proxy = await startProxy({ backend: 'fs', advisoryDir: ADVISORY_DIR })
  await proxy.services.licenseSets(proxy.ns).update((items) => ({
    items: items.set('ls-copyleft', {
      id: 'ls-copyleft',
      name: 'Copyleft',
      licenses: ['GPL-2.0-only', 'GPL-3.0-only', 'AGPL-3.0-only'],
      createdAt: '',
      updatedAt: '',
    }),
    result: undefined,
  }))
  await proxy.putFirewall('main', mainFirewall())
  await proxy.putFirewall('fresh', {
    upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token } }],
    rules: [
      rule('min-age', 'versions', { name: 'minimumAge', duration: '7d' }, 'versions must be at least 7 days old'),
    ],
  })
  ownerToken = await proxy.token('owner')
})

afterAll(async () => {
  await proxy?.close()
  await registry?.stop()
})

const installed = (dir: string, name: string) =>
  JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version

/** The single firewall.* event of a request id that npm printed. */
async function blockedEventFor(output: string, type = 'firewall.blocked') {
  const events = (await proxy.events(type)).filter((e) => output.includes(e.data.request))
  expect(events).toHaveLength(1)
  return events[0]
}

describe('npm install through the firewall', () => {
  it('installs an allowed package with the lock file resolved through the proxy URL', async () => {
    const client = npmClient(proxy.registryUrl('main'), ownerToken)
    const result = await client.npm(['install', 'fw-ok'])
    expect(result.code, result.output).toBe(0)
    expect(installed(client.dir, 'fw-ok')).toBe('1.0.0')
    expect(installed(client.dir, 'fw-dep')).toBe('1.0.0')
    const lock = JSON.parse(readFileSync(join(client.dir, 'package-lock.json'), 'utf8'))
    const upstream = (await (await fetch(`${registry.url}/fw-ok`)).json()) as any
    expect(lock.packages['node_modules/fw-ok'].resolved).toBe(`${proxy.registryUrl('main')}fw-ok/-/fw-ok-1.0.0.tgz`)
    expect(lock.packages['node_modules/fw-ok'].integrity).toBe(upstream.versions['1.0.0'].dist.integrity)
    expect(lock.packages['node_modules/fw-dep'].resolved.startsWith(proxy.registryUrl('main'))).toBe(true)
    // Plain allows are logged but emit nothing (fw-ok's LOW advisory is below the rule's threshold).
    const entries = await proxy.log('main', { packageName: 'fw-ok' })
    expect(entries).toMatchObject([
      {
        packageName: 'fw-ok',
        version: '1.0.0',
        blocked: false,
        outcome: 'allowed',
        executionPhase: 'download',
        upstream: 'verdaccio',
        user: 'owner',
      },
    ])
    expect((await proxy.events()).filter((e) => e.data.packageName === 'fw-ok')).toEqual([])
  })

  it('serves scoped packages and emits firewall.allowed for a log-only rule', async () => {
    const client = npmClient(proxy.registryUrl('main'), ownerToken)
    const view = await client.npm(['view', '@fwscope/scoped', 'version'])
    expect(view.output.trim()).toBe('1.0.0')
    const result = await client.npm(['install', '@fwscope/scoped'])
    expect(result.code, result.output).toBe(0)
    const [event] = await proxy.events('firewall.allowed')
    expect(event.data).toMatchObject({
      packageName: '@fwscope/scoped',
      rule: 'log-scoped',
      blocked: false,
      executionPhase: 'download',
    })
    expect(await proxy.log('main', { packageName: '@fwscope/scoped' })).toMatchObject([
      { outcome: 'logged', rule: 'log-scoped', request: event.data.request },
    ])
  })

  it('fails npm install on a packageName download rule, printing rule id and request id', async () => {
    const token = `${await proxy.token('dev')}~build-42`
    await proxy.putFirewall('main', { ...mainFirewall(), permissions: { dev: ['fw:access'] } })
    const client = npmClient(proxy.registryUrl('main'), token)
    const result = await client.npm(['install', 'fw-blocked-name'])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('403')
    expect(result.output).toContain('block-name')
    expect(result.output).toContain('fw-blocked-name is banned in this organisation')
    const event = await blockedEventFor(result.output)
    expect(event.data).toMatchObject({
      firewall: 'main',
      executionPhase: 'download',
      blocked: true,
      ecosystem: 'npm',
      packageName: 'fw-blocked-name',
      version: '1.0.0',
      upstream: 'verdaccio',
      rule: 'block-name',
      user: 'dev',
      interaction: 'build-42',
      message: 'fw-blocked-name is banned in this organisation',
    })
    expect(event.data.published).toBeTypeOf('string')
    expect(await proxy.log('main', { packageName: 'fw-blocked-name', blocked: true })).toMatchObject([
      { request: event.data.request, rule: 'block-name' },
    ])
    // Where to go next: the dashboard form for this request (same origin as the registry by default).
    expect(result.output).toContain(
      `${proxy.origin}/namespaces/acme/firewalls/main/exception-requests/new?request=${event.data.request}`,
    )
  })

  it('minimumAge in the versions phase picks the older version and blocks the pinned new one as a download', async () => {
    const client = npmClient(proxy.registryUrl('fresh'), ownerToken)
    const latest = await client.npm(['install', 'fw-aged'])
    expect(latest.code, latest.output).toBe(0)
    expect(installed(client.dir, 'fw-aged')).toBe('1.0.0')
    expect(await proxy.events()).not.toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ firewall: 'fresh' }) }),
    )

    const pinned = await npmClient(proxy.registryUrl('fresh'), ownerToken).npm(['install', 'fw-aged@2.0.0'])
    expect(pinned.code).not.toBe(0)
    expect(pinned.output).toContain('policy violations')
    expect(pinned.output).toContain('min-age')

    const direct = await npmClient(proxy.registryUrl('fresh'), ownerToken).npm([
      'install',
      `${proxy.registryUrl('fresh')}fw-aged/-/fw-aged-2.0.0.tgz`,
    ])
    expect(direct.code).not.toBe(0)
    expect(direct.output).toContain('min-age')
    const event = await blockedEventFor(direct.output)
    expect(event.data).toMatchObject({
      firewall: 'fresh',
      executionPhase: 'download',
      packageName: 'fw-aged',
      version: '2.0.0',
      rule: 'min-age',
    })
  })

  it.each([
    ['fw-gpl', 'deny-gpl', 'copyleft licenses are not allowed'],
    ['fw-scripts', 'no-scripts', 'packages with install scripts need review'],
    ['fw-deprecated', 'no-deprecated', 'deprecated packages are not allowed'],
  ])('blocks %s with rule %s', async (pkg, ruleId, description) => {
    const result = await npmClient(proxy.registryUrl('main'), ownerToken).npm(['install', pkg])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain(ruleId)
    expect(result.output).toContain(description)
    const event = await blockedEventFor(result.output)
    expect(event.data).toMatchObject({ packageName: pkg, rule: ruleId, blocked: true })
  })

  it('blocks a version named by a high OSV advisory, with the advisory id in output', async () => {
    const result = await npmClient(proxy.registryUrl('main'), ownerToken).npm(['install', 'fw-vuln'])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('vuln-high')
    const event = await blockedEventFor(result.output)
    expect(event.data.output.advisories).toMatchObject([
      { id: 'GHSA-fwvu-lnxx-0001', severity: 'high', cvss: expect.any(Number) },
    ])
  })

  it('blocks a package named by a MAL- record', async () => {
    const result = await npmClient(proxy.registryUrl('main'), ownerToken).npm(['install', 'fw-malware'])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('malware')
    const event = await blockedEventFor(result.output)
    expect(event.data).toMatchObject({ rule: 'malware', packageName: 'fw-malware' })
    expect(event.data.output).toMatchObject({
      signals: ['MAL-2099-0001'],
      finding: expect.stringContaining('fw-malware'),
    })
  })

  it('lets an excepted package through with firewall.exception-allowed, and blocks again after expiry', async () => {
    const expires = new Date(proxy.clock.now() + HOUR).toISOString()
    await proxy.putFirewall(
      'main',
      mainFirewall([
        { id: 'ex-vuln', rule: 'vuln-high', selector: { packageName: 'fw-vuln' }, expires, reason: 'accepted_risk' },
      ]),
    )
    const allowed = await npmClient(proxy.registryUrl('main'), ownerToken).npm(['install', 'fw-vuln'])
    expect(allowed.code, allowed.output).toBe(0)
    const [event] = await proxy.events('firewall.exception-allowed')
    expect(event.data).toMatchObject({
      packageName: 'fw-vuln',
      rule: 'vuln-high',
      exception: 'ex-vuln',
      blocked: false,
    })

    proxy.clock.advance(2 * HOUR)
    const again = await npmClient(proxy.registryUrl('main'), ownerToken).npm(['install', 'fw-vuln'])
    expect(again.code).not.toBe(0)
    expect((await blockedEventFor(again.output)).data).toMatchObject({ rule: 'vuln-high', packageName: 'fw-vuln' })
  })

  it('answers 401 without a token, 403 without fw:access and 404 for a firewall the caller cannot see', async () => {
    const url = `${proxy.registryUrl('main')}fw-ok`
    expect((await fetch(url)).status).toBe(401)
    expect((await fetch(url, { headers: { authorization: 'Bearer fwp_notarealtokennotarealtoken' } })).status).toBe(401)
    await proxy.putFirewall('main', { ...mainFirewall(), permissions: { reader: ['fw:read'] } })
    const reader = await fetch(url, { headers: { authorization: `Bearer ${await proxy.token('reader')}` } })
    expect(reader.status).toBe(403)
    expect(((await reader.json()) as any).error).toContain('fw:access')
    expect((await fetch(url, { headers: { authorization: `Bearer ${await proxy.token('outsider')}` } })).status).toBe(
      404,
    )
    expect(
      (await fetch(`${proxy.registryUrl('nope')}fw-ok`, { headers: { authorization: `Bearer ${ownerToken}` } })).status,
    ).toBe(404)
  })

  it('records every decision event in the firewall log, queryable through the log API', async () => {
    const events = (await proxy.events()).filter((e) => e.type.startsWith('firewall.'))
    expect(events.length).toBeGreaterThanOrEqual(9)
    const principal = await authenticate(proxy.services, ownerToken, proxy.ns)
    const ctx = { services: proxy.services, ns: proxy.ns, principal, meta: { requestId: 'req-test' } }
    const logged = [
      ...(await queryFirewallLog(ctx, 'main', { limit: 1000 })).entries,
      ...(await queryFirewallLog(ctx, 'fresh', { limit: 1000 })).entries,
    ]
    for (const event of events) {
      expect(logged).toContainEqual(
        expect.objectContaining({ request: event.data.request, rule: event.data.rule, blocked: event.data.blocked }),
      )
    }
    const blockedOnly = await queryFirewallLog(ctx, 'main', { blocked: true, limit: 2 })
    expect(blockedOnly.entries).toHaveLength(2)
    expect(blockedOnly.entries.every((e) => e.blocked)).toBe(true)
    expect(blockedOnly.nextCursor).not.toBeNull()
    expect(existsSync(ADVISORY_DIR)).toBe(true)
  })
})
