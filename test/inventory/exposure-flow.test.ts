import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BACKEND_KINDS, sharedStorageEnv, type BackendKind } from '../support/backends'
import { readEvents } from '../support/events'
import { fixtureRecords, malRecord, osvZip, startOsvFeed, type OsvFeed } from '../support/osv-feed'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { eventually } from '../support/wait-for'
import { npmClient, publishFixtures } from '../registry/npm-cli'
import { Receiver } from '../webhooks/support/receiver'
import { cyclonedx15Validator } from '../support/cyclonedx'

/**
 * Issue 28, the real flow: npm installs a version through a firewall; later the advisory feed (a
 * loopback OSV bucket) publishes a `MAL-` record for it. Within one refresh the exposure is listed
 * with the installing principal and its `firewall.exposure` event reaches a real receiver, valid
 * against the served schema; a version never served raises nothing; after a restart nothing is
 * detected twice. On fs, one Redis and a Redis Cluster.
 */

const TOKEN = 'fwp_inventoryFlowOwnerToken0123456789abcdefg'
const NS = 'default'
const records = fixtureRecords('npm')

let registry: Verdaccio
let feed: OsvFeed

beforeAll(async () => {
  registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, [
    { name: 'inv-served', version: '1.0.0', license: 'MIT' },
    { name: 'inv-served', version: '2.0.0', license: 'MIT' },
    { name: 'inv-never', version: '1.0.0', license: 'MIT' },
    { name: 'inv-later', version: '1.0.0', license: 'MIT' },
  ])
  feed = await startOsvFeed({ npm: osvZip(records) })
}, 180_000)

afterAll(async () => {
  await feed?.close()
  await registry?.stop()
})

async function storageEnv(kind: BackendKind): Promise<Record<string, string>> {
  if (kind === 'fs') return { DATA_DIR: mkdtempSync(join(tmpdir(), 'pf-inventory-')) }
  return sharedStorageEnv(kind, 'inventory-flow')
}

describe.each(BACKEND_KINDS)('a package you served turns malicious (%s)', (kind) => {
  let env: Record<string, string>
  let server: RunningServer
  let api: Api
  let receiver: Receiver

  const start = async () => {
    server = await startServer(env)
    api = apiClient(server.url, TOKEN)
  }
  const exposures = async (query = '') => {
    const res = await api('GET', `/v1/${NS}/exposures${query}`)
    expect(res.status).toBe(200)
    return res.body as Record<string, any>[]
  }
  const exposureEvents = async () => (await readEvents(server)).filter((e) => e.type === 'firewall.exposure')

  beforeAll(async () => {
    env = {
      BOOTSTRAP_TOKEN: TOKEN,
      ADVISORY_FEED_URL: feed.url,
      ADVISORY_REFRESH: '500ms',
      UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      ...(await storageEnv(kind)),
    }
    feed.publish('npm', osvZip(records))
    await start()
    const schema = await (await fetch(`${server.url}/schemas/webhook-events-v1.json`)).json()
    receiver = await new Receiver().start(schema)
    const upstream = { id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token } }
    expect((await api('PUT', `/v1/${NS}/config/main`, { upstreams: [upstream], rules: [] })).status).toBeLessThan(300)
    const hook = await api('POST', `/v1/${NS}/webhooks`, {
      name: 'security',
      url: receiver.url,
      eventTypes: ['firewall.exposure'],
    })
    expect(hook.status).toBe(201)
    receiver.secrets = [hook.body.secret]
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
    await receiver?.stop()
  })

  it('records what npm installed: version, count, when and to whom', async () => {
    const client = npmClient(`${server.url}/registry/${NS}/main/`, TOKEN)
    const installed = await client.npm(['install', 'inv-served@1.0.0', 'inv-later@1.0.0'])
    expect(installed.code, installed.output).toBe(0)
    // Served-records are written after each response is sent, so wait until both have landed.
    const served = await eventually(async () => (await api('GET', `/v1/${NS}/inventory`)).body, {
      accept: (body) =>
        Array.isArray(body) &&
        ['inv-served', 'inv-later'].every((name) => body.some((e: { packageName: string }) => e.packageName === name)),
      timeoutMs: 20_000,
    })
    expect(served.map((e: { firewall: string; packageName: string }) => `${e.firewall}/${e.packageName}`)).toEqual(
      expect.arrayContaining(['main/inv-served', 'main/inv-later']),
    )
    const entries = (await api('GET', `/v1/${NS}/config/main/inventory?packageName=inv-served`)).body
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({
      packageName: 'inv-served',
      version: '1.0.0',
      ecosystem: 'npm',
      count: 1,
      servedTo: ['owner'],
    })
    expect(Date.parse(entries[0].lastServedAt)).toBeGreaterThanOrEqual(Date.parse(entries[0].firstServedAt))
  })

  it('serves a CycloneDX 1.5 SBOM of what it served, one component with its purl per version', async () => {
    const res = await fetch(`${server.url}/v1/${NS}/config/main/inventory/sbom`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/vnd.cyclonedx+json')
    const bom = (await res.json()) as { specVersion: string; components: { purl: string; version: string }[] }
    expect(cyclonedx15Validator()(bom)).toEqual([])
    expect(bom.specVersion).toBe('1.5')
    expect(bom.components.map((c) => c.purl).sort()).toEqual(['pkg:npm/inv-later@1.0.0', 'pkg:npm/inv-served@1.0.0'])
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const empty = await api('GET', `/v1/${NS}/config/main/inventory/sbom?since=${encodeURIComponent(later)}`)
    expect(cyclonedx15Validator()(empty.body)).toEqual([])
    expect(empty.body.components ?? []).toEqual([])
  })

  it('lists the exposure with the installing principal within one refresh, and delivers its event', async () => {
    feed.publish(
      'npm',
      osvZip([
        ...records,
        malRecord('MAL-2099-7001', 'npm', 'inv-served', ['1.0.0']),
        malRecord('MAL-2099-7002', 'npm', 'inv-never', ['1.0.0']),
      ]),
    )
    const found = await eventually(() => exposures(), { accept: (list) => list.length > 0, timeoutMs: 20_000 })
    expect(found).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^exp-/),
        firewall: 'main',
        packageName: 'inv-served',
        version: '1.0.0',
        advisory: { id: 'MAL-2099-7001', aliases: [], kind: 'malware' },
        servedTo: ['owner'],
        status: 'open',
      }),
    ])
    const receipt = await eventually(
      () => receiver.receipts.find((r) => r.json.events.some((e) => e.type === 'firewall.exposure')),
      { timeoutMs: 30_000 },
    )
    expect(receipt!.schemaErrors).toEqual([])
    expect(receipt!.verifiedWith).toEqual([0])
    const event = receipt!.json.events.find((e) => e.type === 'firewall.exposure')!
    expect(event.data).toMatchObject({ id: found[0].id, servedTo: ['owner'], advisory: { id: 'MAL-2099-7001' } })
  })

  it('raises nothing for a version never served', async () => {
    const list = await exposures()
    expect(list.map((e) => e.packageName)).not.toContain('inv-never')
  })

  it('acknowledges with an audit entry, and lists by status', async () => {
    const [open] = await exposures('?status=open')
    const ack = await api('POST', `/v1/${NS}/exposures/${open.id}/acknowledge`, { comment: 'rotated secrets' })
    expect(ack.status).toBe(200)
    expect(ack.body).toMatchObject({ status: 'acknowledged', comment: 'rotated secrets', acknowledgedBy: 'owner' })
    expect(await exposures('?status=open')).toEqual([])
    expect((await exposures('?status=acknowledged')).map((e) => e.id)).toEqual([open.id])
    const audit = await api('GET', `/v1/${NS}/audit?action=exposure.acknowledge`)
    expect(audit.body.length).toBeGreaterThan(0)
    const bad = await api('POST', `/v1/${NS}/exposures/${open.id}/acknowledge`, { comment: 5 })
    expect(bad.status).toBe(400)
    expect((await api('POST', `/v1/${NS}/exposures/exp-missing/acknowledge`, {})).status).toBe(404)
  })

  it('detects nothing twice after a restart', async () => {
    await server.stop()
    await start()
    // A new record after the restart: once it is detected, the start-up scan queued before it is done.
    feed.publish(
      'npm',
      osvZip([
        ...records,
        malRecord('MAL-2099-7001', 'npm', 'inv-served', ['1.0.0']),
        malRecord('MAL-2099-7002', 'npm', 'inv-never', ['1.0.0']),
        malRecord('MAL-2099-7003', 'npm', 'inv-later'),
      ]),
    )
    const list = await eventually(() => exposures(), { accept: (l) => l.length === 2, timeoutMs: 30_000 })
    expect(list.map((e) => e.advisory.id).sort()).toEqual(['MAL-2099-7001', 'MAL-2099-7003'])
    const events = await exposureEvents()
    expect(events.map((e) => (e.data as { advisory: { id: string } }).advisory.id).sort()).toEqual([
      'MAL-2099-7001',
      'MAL-2099-7003',
    ])
  })
})
