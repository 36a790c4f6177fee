import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Backend } from '../../storage'
import { InventoryRepository, type InventoryAddition } from '../../storage/repositories/inventory'
import { createUser } from '../support/admin'
import { backendOfEnv, sharedStorageEnv } from '../support/backends'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'

/**
 * The inventory API over a stored inventory: paging in (package, version) order without repeats,
 * across firewalls, and who may read it (fw:access alone may not).
 */

const TOKEN = 'fwp_inventoryApi000000000000000000000001'
const PACKAGES = 230

const addition = (firewall: string, i: number, version: string): InventoryAddition => {
  const name = `pkg-${String(i).padStart(3, '0')}`
  return {
    firewall,
    ecosystem: 'npm',
    packageName: name,
    nameKey: name,
    version,
    firstServedAt: Date.parse('2026-01-01T00:00:00Z') + i * 60_000,
    lastServedAt: Date.parse('2026-01-02T00:00:00Z') + i * 60_000,
    count: 1,
    servedTo: ['alice'],
  }
}

let server: RunningServer
let backend: Backend
let owner: Api
let developer: Api

beforeAll(async () => {
  server = await startServer({ ...(await sharedStorageEnv('redis', 'inventory-api')), BOOTSTRAP_TOKEN: TOKEN })
  owner = apiClient(server.url, TOKEN)
  developer = apiClient(server.url, await createUser(server, 'dev'))
  for (const fw of ['web', 'api', 'idle']) {
    const permissions = fw === 'web' ? { dev: ['fw:access'] } : {}
    expect((await owner('PUT', `/v1/default/config/${fw}`, { ecosystem: 'npm', permissions })).status).toBe(201)
  }
  backend = await backendOfEnv(server.env)
  const inventory = new InventoryRepository(backend)
  // Stored in an order unlike the listing's: the list sorts.
  const web: InventoryAddition[] = []
  for (let i = PACKAGES - 1; i >= 0; i--) web.push(addition('web', i, '2.0.0'), addition('web', i, '1.0.0'))
  await inventory.merge('default', web)
  await inventory.merge('default', [addition('api', 7, '9.9.9')])
}, 120_000)

afterAll(async () => {
  await backend?.close()
  await server?.stop()
})

async function pages(api: Api, path: string, limit: number) {
  const seen: { packageName: string; version: string; firewall?: string }[] = []
  let next: string | null = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}`
  let calls = 0
  while (next && calls < 100) {
    const response = await api('GET', next)
    expect(response.status).toBe(200)
    seen.push(...response.body)
    next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1] ?? null
    calls++
  }
  return { seen, calls }
}

describe('the inventory API', () => {
  it('pages a firewall in package then version order, every entry once', async () => {
    const { seen, calls } = await pages(owner, '/v1/default/config/web/inventory', 97)
    expect(seen).toHaveLength(PACKAGES * 2)
    expect(calls).toBe(Math.ceil((PACKAGES * 2) / 97))
    const keys = seen.map((entry) => `${entry.packageName}@${entry.version}`)
    expect(new Set(keys).size).toBe(keys.length)
    expect(keys.slice(0, 3)).toEqual(['pkg-000@1.0.0', 'pkg-000@2.0.0', 'pkg-001@1.0.0'])
    expect([...keys].sort()).toEqual(keys)
  })

  it('lists across every readable firewall, each entry naming its firewall', async () => {
    const { seen } = await pages(owner, '/v1/default/inventory?packageName=pkg-007', 10)
    expect(seen.map((entry) => [entry.firewall, entry.version])).toEqual([
      ['api', '9.9.9'],
      ['web', '1.0.0'],
      ['web', '2.0.0'],
    ])
  })

  it('is empty for a firewall that served nothing, and refuses a cursor it did not give', async () => {
    const idle = await owner('GET', '/v1/default/config/idle/inventory')
    expect(idle.status).toBe(200)
    expect(idle.body).toEqual([])
    expect(idle.headers.get('link')).toBeNull()
    const forged = await owner('GET', '/v1/default/config/web/inventory?cursor=bm90LWEtY3Vyc29y')
    expect(forged.status).toBe(400)
    expect(forged.body.code).toBe('invalid_cursor')
  })

  it('is not for those who may only install: fw:access gets 403 on the inventory and the SBOM', async () => {
    expect((await developer('GET', '/v1/default/config/web/inventory')).status).toBe(403)
    expect((await developer('GET', '/v1/default/config/web/inventory/sbom')).status).toBe(403)
    const across = await developer('GET', '/v1/default/inventory')
    expect(across.status).toBe(200)
    expect(across.body).toEqual([])
  })
})
