import { emptyFirewall } from '../support/documents'
import { afterEach, describe, expect, it } from 'vitest'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import { redisUrl, uniquePrefix } from '../support/redis'
import { createBackend, type Backend } from '../../storage'
import { createServices, type Services } from '../../server/app/services'
import { createNamespaceWithOwner } from '../../server/namespace/directory'
import { keys } from '../../storage/repositories/keys'
import { hashTaggedName } from '../../storage/migrations/hash-tags'
import { migrateStorage, STORAGE_LAYOUT, StorageLayoutError } from '../../storage/migrations'

/**
 * The names releases before hash tags gave the renamed keys, written out as they were in their
 * keys.ts (`ns:<ns>:...`, `audit:<ns>`, `fwlog:<ns>:<fw>`, events in `ns:<ns>:events`); logs are
 * stored as `log:<name>`, plus `:<slot>` per entry on fs.
 */
function layout1Name(key: string): string {
  const tagged = /^(ns|log:ns):\{([^}]+)\}:(.*)$/.exec(key)
  if (!tagged) return key
  const [, head, ns, rest] = tagged
  if (head === 'ns') return `ns:${ns}:${rest}`
  const [kind, ...tail] = rest.split(':')
  if (kind === 'audit') return ['log', 'audit', ns, ...tail].join(':')
  if (kind === 'fwlog') return ['log', 'fwlog', ns, ...tail].join(':')
  if (kind === 'events') return ['log', 'ns', ns, 'events', ...tail].join(':')
  throw new Error(`no layout-1 name for ${key}`)
}

/** Rewrites storage written by this release into layout 1, as an older release left it. */
async function downgrade(backend: Backend): Promise<void> {
  for (const key of await backend.keyValue.keys('')) {
    if (layout1Name(key) !== key) await backend.keyValue.moveKey(key, layout1Name(key))
  }
  // Layout 4 added the namespace index.
  await backend.keyValue.delete(keys.namespaceIndex)
  await backend.keyValue.delete(keys.storageLayout)
}

const firewall = emptyFirewall

/** One of everything a namespace holds, written through the repositories. */
async function populate(services: Services): Promise<void> {
  await createNamespaceWithOwner(services, 'acme', 'owner')
  await services.teams('acme').update((items) => ({
    items: items.set('ops', { id: 'ops', name: 'Ops', permissions: [], members: [], createdAt: '', updatedAt: '' }),
    result: null,
  }))
  for (const summary of ['one', 'two']) {
    await services.firewalls.mutate('acme', 'fw1', {}, 'now', (current) => ({
      next: { ...(current ?? firewall('fw1')), description: summary },
      summary,
      result: () => null,
    }))
  }
  const event = { id: 'ev-1', type: 'audit.token.created', time: new Date().toISOString(), namespace: 'acme' } as never
  await services.events.appendAudit('acme', { id: 'a-1', action: 'token.created' }, event)
  await services.events.appendAudit('acme', { id: 'a-2', action: 'token.revoked' }, event)
  await services.events.appendDecision('acme', 'fw1', { id: 'log-1' }, [])
  await services.webhooks.mutate('acme', 'wh1', () => ({
    next: { id: 'wh1', name: 'hook', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', createdAt: 't' } as never,
    result: null,
  }))
  await services.webhooks.saveSnapshot('acme', 'wh1', { status: 'active', value: 'idle' })
}

/** What the repositories read back: must be the same before the downgrade and after the migration. */
async function readBack(services: Services, backend: Backend) {
  return {
    namespaces: await services.namespaces.ids(),
    namespace: await services.namespaces.get('acme'),
    users: await services.namespaces.users('acme').all(),
    teams: await services.teams('acme').all(),
    tokens: await services.tokens.list('acme'),
    firewall: await services.firewalls.get('acme', 'fw1'),
    history: (await services.firewalls.history('acme', 'fw1', 2, 10)).map((entry) => entry.config.description),
    audit: (await services.events.auditPage('acme', null, 10)).map((entry) => entry.value),
    firewallLog: await backend.logs.length(keys.firewallLog('acme', 'fw1')),
    events: (await services.events.read('acme', null, 10)).map((entry) => (entry.value as { id: string }).id),
    cursor: await services.webhooks.cursors.get('acme', 'wh1'),
    webhooks: await services.webhooks.list('acme'),
    webhookRefs: await services.webhooks.allRefs(),
    snapshot: await services.webhooks.loadSnapshot('acme', 'wh1'),
  }
}

describe('layout 1 -> 2 key names', () => {
  it('puts every namespace key and log under the namespace hash tag and leaves the rest', () => {
    expect(hashTaggedName('ns:acme:meta')).toBe('ns:{acme}:meta')
    expect(hashTaggedName('ns:acme:fw-history:fw1:3')).toBe('ns:{acme}:fw-history:fw1:3')
    expect(hashTaggedName('log:audit:acme')).toBe('log:ns:{acme}:audit')
    expect(hashTaggedName('log:audit:acme:000000000004')).toBe('log:ns:{acme}:audit:000000000004')
    expect(hashTaggedName('log:fwlog:acme:fw1')).toBe('log:ns:{acme}:fwlog:fw1')
    expect(hashTaggedName('log:ns:acme:events')).toBe('log:ns:{acme}:events')
    expect(hashTaggedName('log:ns:acme:events:000000000012')).toBe('log:ns:{acme}:events:000000000012')
    expect(hashTaggedName('ns:acme:wh-cursor:wh1')).toBe('ns:{acme}:wh-cursor:wh1')
    const untouched = [
      'ns:{acme}:meta',
      'log:ns:{acme}:audit',
      'log:ns:{acme}:events',
      'token:abc',
      'wh-all',
      'regcache:pkm:a:b',
      'lease:webhook:acme:wh1',
      'storage:layout',
    ]
    // The event layout before per-namespace logs keeps its names for its own step.
    const legacyEvents = [
      'log:events',
      'log:events:000000000003',
      'queue:wh-buffer:acme:wh1',
      'queue:wh-buffer:acme:wh1:000000000000',
      'ns:acme:wh-batch:wh1',
      'wh-router-cursor',
    ]
    for (const key of [...untouched, ...legacyEvents]) {
      expect(hashTaggedName(key)).toBeNull()
    }
  })
})

describe.each(BACKEND_KINDS)('storage migration at start (%s)', (kind) => {
  const opened: Backend[] = []
  const open = async () => {
    const backend = await makeBackend(kind)
    opened.push(backend)
    return backend
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()))
  })

  it('moves data written before hash tags to the tagged names; every repository reads it as before', async () => {
    const backend = await open()
    const services = createServices(backend)
    await migrateStorage(backend)
    await populate(services)
    const expected = await readBack(services, backend)
    await downgrade(backend)
    // The layout older releases wrote, by its literal names.
    expect(await backend.keyValue.get('ns:acme:meta')).toMatchObject({ id: 'acme', owner: 'owner' })
    expect(await backend.keyValue.get('ns:acme:fw:fw1')).toMatchObject({ id: 'fw1', description: 'two' })
    expect(await backend.logs.length('audit:acme')).toBe(2)
    expect(await backend.logs.length('fwlog:acme:fw1')).toBe(1)
    expect(await backend.logs.length('ns:acme:events')).toBe(2)
    expect(await backend.keyValue.get('ns:acme:wh-cursor:wh1')).not.toBeNull()
    expect(await backend.keyValue.get('wh-all')).toEqual({ items: { 'acme/wh1': true } })
    expect(await services.namespaces.ids()).toEqual([])

    const outcome = await migrateStorage(backend)
    expect(outcome).toEqual({
      from: 1,
      to: STORAGE_LAYOUT,
      ran: ['hash-tags', 'events-once', 'namespace-index', 'delivery-index-pages'],
    })
    expect(await readBack(services, backend)).toEqual(expected)
    expect((await backend.keyValue.keys('')).filter((key) => hashTaggedName(key) !== null)).toEqual([])
    expect(await backend.keyValue.get(keys.storageLayout)).toEqual({ version: STORAGE_LAYOUT })
    expect(await migrateStorage(backend)).toEqual({ from: STORAGE_LAYOUT, to: STORAGE_LAYOUT, ran: [] })
  })

  it('finishes a migration interrupted between copying a key and removing the old one', async () => {
    const backend = await open()
    const services = createServices(backend)
    await populate(services)
    const expected = await readBack(services, backend)
    await downgrade(backend)
    // An earlier run copied these two and died before removing the originals.
    await backend.keyValue.set('ns:{acme}:meta', await backend.keyValue.get('ns:acme:meta'))
    await backend.keyValue.set('ns:{acme}:fw:fw1', await backend.keyValue.get('ns:acme:fw:fw1'))
    await migrateStorage(backend)
    expect(await readBack(services, backend)).toEqual(expected)
    expect(await backend.keyValue.get('ns:acme:meta')).toBeNull()
  })

  it('lists the namespaces of layout 3 (no index) from the index it builds', async () => {
    const backend = await open()
    const services = createServices(backend)
    for (const ns of ['acme', 'constructor', 'zeta']) await createNamespaceWithOwner(services, ns, 'owner')
    // What the release before the index left: layout 3, namespaces found only by scanning.
    await backend.keyValue.delete(keys.namespaceIndex)
    await backend.keyValue.set(keys.storageLayout, { version: 3 })
    expect(await services.namespaces.ids()).toEqual([])
    expect(await migrateStorage(backend)).toEqual({
      from: 3,
      to: STORAGE_LAYOUT,
      ran: ['namespace-index', 'delivery-index-pages'],
    })
    expect((await services.namespaces.ids()).sort()).toEqual(['acme', 'constructor', 'zeta'])
    expect(await services.namespaces.isEmpty()).toBe(false)
    // Retention finds every namespace's logs through it.
    const logs = (await services.retainedLogs.list()).filter((log) => log.kind === 'event').map((log) => log.log)
    expect(logs.sort()).toEqual(['acme', 'constructor', 'zeta'].map((ns) => keys.eventLog(ns)))
  })

  it('refuses storage of a newer layout than this release knows', async () => {
    const backend = await open()
    await backend.keyValue.set(keys.storageLayout, { version: STORAGE_LAYOUT + 1 })
    await expect(migrateStorage(backend)).rejects.toThrow(StorageLayoutError)
  })
})

describe('storage migration with several processes starting at once (redis)', () => {
  const opened: Backend[] = []
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()))
  })

  it('one process migrates, the others wait for it; nothing is lost or moved twice', async () => {
    const url = await redisUrl()
    const prefix = uniquePrefix('migrate')
    const backends = await Promise.all(
      Array.from({ length: 3 }, () => createBackend({ redisUrl: url, redisPrefix: prefix })),
    )
    opened.push(...backends)
    const services = createServices(backends[0])
    await populate(services)
    const expected = await readBack(services, backends[0])
    await downgrade(backends[0])
    const outcomes = await Promise.all(
      backends.map((backend, i) => migrateStorage(backend, { owner: `p${i}`, pollMs: 20 })),
    )
    expect(outcomes.filter((outcome) => outcome.ran.length > 0)).toHaveLength(1)
    for (const backend of backends) expect(await readBack(createServices(backend), backend)).toEqual(expected)
  })

  it('takes over when the process holding the migration lease died', async () => {
    const backend = await createBackend({ redisUrl: await redisUrl(), redisPrefix: uniquePrefix('migrate') })
    opened.push(backend)
    const services = createServices(backend)
    await populate(services)
    const expected = await readBack(services, backend)
    await downgrade(backend)
    // A process took the lease and was killed: its lease runs out after 300 ms.
    expect(await backend.leases.acquire(keys.migrationLease, 'killed', 300)).toBe(true)
    const outcome = await migrateStorage(backend, { owner: 'next', pollMs: 20 })
    expect(outcome.ran).toEqual(['hash-tags', 'events-once', 'namespace-index', 'delivery-index-pages'])
    expect(await readBack(services, backend)).toEqual(expected)
  })
})
