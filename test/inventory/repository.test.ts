import { afterEach, describe, expect, it } from 'vitest'
import type { Backend } from '../../storage'
import { InventoryRepository, type InventoryAddition } from '../../storage/repositories/inventory'
import { ExposureRepository } from '../../storage/repositories/exposures'
import { NamespaceRepository } from '../../storage/repositories/namespaces'
import type { ExposureRecord } from '../../storage/model/inventory'
import { inventoryPrune } from '../../server/inventory/retention'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import { keys } from '../../storage/repositories/keys'

const NS = 'acme'
const DAY = 86_400_000

const addition = (over: Partial<InventoryAddition>): InventoryAddition => ({
  firewall: 'web',
  ecosystem: 'npm',
  packageName: 'left-pad',
  nameKey: 'left-pad',
  version: '1.3.0',
  firstServedAt: 1_000,
  lastServedAt: 1_000,
  count: 1,
  servedTo: ['alice'],
  ...over,
})

const exposure = (id: string): ExposureRecord => ({
  id,
  firewall: 'web',
  ecosystem: 'npm',
  packageName: 'left-pad',
  version: '1.3.0',
  advisory: { id: 'MAL-1', aliases: [], kind: 'malware' },
  firstServedAt: '2026-01-01T00:00:00.000Z',
  lastServedAt: '2026-01-01T00:00:00.000Z',
  servedTo: ['alice'],
  detectedAt: '2026-01-02T00:00:00.000Z',
  status: 'open',
})

describe.each(BACKEND_KINDS)('the inventory in storage (%s)', (kind) => {
  let backend: Backend
  afterEach(async () => backend?.close())

  it('sums what two processes flush into the same version at once, and lists it per firewall', async () => {
    backend = await makeBackend(kind)
    // Two repositories: what two processes sharing the storage hold.
    const one = new InventoryRepository(backend)
    const two = new InventoryRepository(backend)
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        one.merge(NS, [addition({ count: 2, lastServedAt: 2_000 + i, servedTo: [`a${i}`] })]),
      ),
      ...Array.from({ length: 10 }, (_, i) =>
        two.merge(NS, [addition({ count: 3, firstServedAt: 500 + i, servedTo: [`b${i}`] })]),
      ),
    ])
    const [doc] = await one.packages(NS, [{ ecosystem: 'npm', nameKey: 'left-pad' }])
    const stored = doc!.firewalls.web['1.3.0']
    expect(stored.count).toBe(50)
    expect([stored.firstServedAt, stored.lastServedAt]).toEqual([500, 2_009])
    expect(stored.servedTo).toHaveLength(20)
    expect(await two.firewallPackages(NS, 'web')).toEqual([{ ecosystem: 'npm', nameKey: 'left-pad' }])
  })

  it('drops versions past INVENTORY_RETENTION in the retention pass, and packages left empty', async () => {
    backend = await makeBackend(kind)
    await new NamespaceRepository(backend).create({ id: NS, owner: 'o', createdAt: '2026-01-01T00:00:00.000Z' })
    const inventory = new InventoryRepository(backend)
    const now = 500 * DAY
    await inventory.merge(NS, [
      addition({ version: '1.0.0', lastServedAt: now - 450 * DAY }),
      addition({ version: '2.0.0', lastServedAt: now - 10 * DAY }),
      addition({ packageName: 'old', nameKey: 'old', lastServedAt: now - 401 * DAY }),
    ])
    const prune = inventoryPrune(new NamespaceRepository(backend), inventory, 400 * DAY)
    expect(await prune(now)).toBe(2)
    expect((await inventory.firewallPackages(NS, 'web')).map((ref) => ref.nameKey)).toEqual(['left-pad'])
    const [pad, old] = await inventory.packages(NS, [
      { ecosystem: 'npm', nameKey: 'left-pad' },
      { ecosystem: 'npm', nameKey: 'old' },
    ])
    expect(Object.keys(pad!.firewalls.web)).toEqual(['2.0.0'])
    expect(old).toBeNull()
  })

  it('stores an exposure and its event once, however often and by whomever it is detected', async () => {
    backend = await makeBackend(kind)
    const first = new ExposureRepository(backend)
    const second = new ExposureRepository(backend)
    const eventOf = (record: ExposureRecord) => ({
      id: `evt-${record.id}-${Math.random()}`,
      type: 'firewall.exposure',
      time: record.detectedAt,
      namespace: NS,
      data: { id: record.id },
    })
    const results = await Promise.all([
      first.recordNew(NS, [exposure('exp-1')], eventOf),
      second.recordNew(NS, [exposure('exp-1'), exposure('exp-2')], eventOf),
      first.recordNew(NS, [exposure('exp-2')], eventOf),
    ])
    expect(
      results
        .flat()
        .map((record) => record.id)
        .sort(),
    ).toEqual(['exp-1', 'exp-2'])
    const events = await backend.logs.range<{ type: string }>(keys.eventLog(NS), { limit: 100 })
    expect(events.filter((entry) => entry.value.type === 'firewall.exposure')).toHaveLength(2)
    expect([...(await first.index(NS)).keys()].sort()).toEqual(['exp-1', 'exp-2'])
  })
})
