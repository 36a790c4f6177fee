import { emptyFirewall } from '../support/documents'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import type { Backend } from '../../storage'
import type { ChangeScope } from '../../storage/ports'
import { createServices, type Services } from '../../server/app/services'
import { issueToken } from '../../server/namespace/tokens'
import { hashToken } from '../../server/auth/tokens'
import { keys, webhookKeys } from '../../storage/repositories/keys'
import { TokenRepository } from '../../storage/repositories/tokens'
import type { HeldDocument, WebhookCursor } from '../../storage/repositories/webhook-cursors'

const firewall = emptyFirewall

describe.each(BACKEND_KINDS)('repositories (%s)', (kind) => {
  let backend: Backend
  let services: Services
  beforeEach(async () => {
    backend = await makeBackend(kind)
    services = createServices(backend)
  })
  afterEach(async () => {
    await backend.close()
  })

  it('namespaces: created once, with the owner as a user', async () => {
    expect(await services.namespaces.isEmpty()).toBe(true)
    expect(await services.namespaces.create({ id: 'ns', owner: 'o', createdAt: 't' })).toBe(true)
    expect(await services.namespaces.create({ id: 'ns', owner: 'x', createdAt: 't' })).toBe(false)
    expect(await services.namespaces.get('ns')).toEqual({ id: 'ns', owner: 'o', createdAt: 't' })
    expect((await services.namespaces.users('ns').all()).map((u) => u.id)).toEqual(['o'])
    expect(await services.namespaces.isEmpty()).toBe(false)
  })

  it('tokens: found by hash, listed, revoked, touched without undoing a revocation', async () => {
    const { record, material } = await issueToken(services, {
      ns: 'ns',
      kind: 'personal',
      name: 't',
      principalId: 'u',
      createdBy: 'u',
    })
    expect(await services.tokens.findByHash(hashToken(material))).toEqual(record)
    expect((await services.tokens.list('ns')).map((t) => t.id)).toEqual([record.id])
    await services.tokens.revoke(record, 'now')
    await services.tokens.touch(record, 'later')
    const stored = await services.tokens.findByHash(record.hash)
    expect(stored?.revokedAt).toBe('now')
    expect(stored?.lastUsedAt).toBeNull()
    expect(await services.tokens.list('ns')).toEqual([])
  })

  it('collections: atomic updates keep every concurrent change', async () => {
    const teams = services.teams('ns')
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        teams.update((items) => ({
          items: items.set(`t${i}`, {
            id: `t${i}`,
            name: 'n',
            permissions: [],
            members: [],
            createdAt: '',
            updatedAt: '',
          }),
          result: null,
        })),
      ),
    )
    expect((await teams.all()).length).toBe(25)
    expect(await teams.find('t3')).toMatchObject({ id: 't3' })
  })

  it('firewalls: versions, history and continuation after delete', async () => {
    const repo = services.firewalls
    const put = (summary: string) =>
      repo.mutate('ns', 'fw', {}, 'now', (current) => ({
        next: { ...(current ?? firewall('fw')), description: summary },
        summary,
        result: (s) => s,
      }))
    await put('one')
    await Promise.all(Array.from({ length: 10 }, (_, i) => put(`p${i}`)))
    expect((await repo.get('ns', 'fw'))?.version).toBe(11)
    const history = await repo.history('ns', 'fw', 11, 100)
    expect(history.map((h) => h.version)).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
    expect((await repo.getVersion('ns', 'fw', 1))?.config.description).toBe('one')
    await repo.mutate('ns', 'fw', {}, 'now', () => ({ next: null, summary: 'deleted', result: () => null }))
    expect(await repo.get('ns', 'fw')).toBeNull()
    expect(await repo.list('ns')).toEqual([])
    await put('again')
    expect((await repo.get('ns', 'fw'))?.version).toBe(12)
  })

  it('firewalls: the change and its events commit together or not at all', async () => {
    await expect(
      services.firewalls.mutate('ns', 'bad', {}, 'now', () => {
        throw new Error('refused')
      }),
    ).rejects.toThrow('refused')
    expect(await services.firewalls.get('ns', 'bad')).toBeNull()
    expect(await backend.logs.length(keys.eventLog('ns'))).toBe(0)
  })

  it('event log: an audit entry or a decision and its events are appended together', async () => {
    const event = { id: 'ev-1', type: 'audit.token.created', time: new Date().toISOString(), namespace: 'ns' } as never
    await services.events.appendAudit('ns', { id: 'ev-1', action: 'token.created' }, event)
    await services.events.appendDecision('ns', 'fw', { id: 'log-1' }, [])
    await services.events.append([event])
    expect((await services.events.auditPage('ns', null, 10)).map((e) => e.value)).toEqual([
      { id: 'ev-1', action: 'token.created' },
    ])
    expect((await services.events.read('ns', null, 10)).map((e) => (e.value as { id: string }).id)).toEqual([
      'ev-1',
      'ev-1',
    ])
    expect(await backend.logs.length(keys.firewallLog('ns', 'fw'))).toBe(1)
  })

  it('leases: one owner at a time per name, released only by its owner', async () => {
    const lease = services.leases.retention()
    expect(lease.name).toBe(keys.retentionLease)
    expect(await lease.acquire('a', 10_000)).toBe(true)
    expect(await lease.acquire('b', 10_000)).toBe(false)
    await lease.release('b')
    expect(await lease.owner()).toBe('a')
    expect(await services.leases.webhook('ns', 'one').acquire('b', 10_000)).toBe(true)
    await lease.release('a')
    expect(await lease.owner()).toBeNull()
  })

  it('registry cache: packuments and tarballs as bytes under their keys', async () => {
    await services.registryCache.setPackument('s', 'n', Buffer.from('{"fetchedAt":1}\n{"name":"x"}'))
    expect((await services.registryCache.getPackument('s', 'n'))?.toString()).toBe('{"fetchedAt":1}\n{"name":"x"}')
    expect((await backend.keyValue.getBytes(keys.registryPackument('s', 'n')))?.toString()).toBe(
      '{"fetchedAt":1}\n{"name":"x"}',
    )
    await services.registryCache.deletePackument('s', 'n')
    expect(await services.registryCache.getPackument('s', 'n')).toBeNull()
    await services.registryCache.setTarball('i', Buffer.from('tgz'))
    expect((await services.registryCache.getTarball('i'))?.toString()).toBe('tgz')
  })

  it('dashboard session secret: created once, then opened from its stored form', async () => {
    const create = () => ({ secret: 'plain', stored: 'sealed' })
    expect(await services.dashboardSessions.sessionSecret((s) => `opened:${s}`, create)).toBe('plain')
    expect(await services.dashboardSessions.sessionSecret((s) => `opened:${s}`, create)).toBe('opened:sealed')
    expect(await backend.keyValue.get(keys.dashboardSessionSecret)).toBe('sealed')
  })

  it('tokens: the authentication read brings token, namespace and teams in one call', async () => {
    await services.namespaces.create({ id: 'ns', owner: 'owner', createdAt: new Date().toISOString() })
    const { record, material } = await issueToken(services, {
      ns: 'ns',
      kind: 'personal',
      name: 't',
      principalId: 'owner',
      createdBy: 'owner',
    })
    const found = await services.tokens.findForNamespace(hashToken(material), 'ns')
    expect(found.token).toEqual(record)
    expect((found.namespace as { owner: string }).owner).toBe('owner')
    const other = await services.tokens.findForNamespace(hashToken(material), 'elsewhere')
    expect(other.namespace).toBeNull()
  })

  it('tokens: the authentication read is reused until a revocation, a team change or an announced change, not an event alone', async () => {
    await services.namespaces.create({ id: 'ns', owner: 'owner', createdAt: new Date().toISOString() })
    const issue = (name: string) =>
      issueToken(services, { ns: 'ns', kind: 'personal', name, principalId: 'owner', createdBy: 'owner' })
    const { record, material } = await issue('t')
    const hash = hashToken(material)
    // Nothing is kept until the change notifications are live (the first read subscribes).
    await services.tokens.findForNamespace(hash, 'ns')
    await backend.signals.eventsReady()
    const first = await services.tokens.findForNamespace(hash, 'ns')
    expect(await services.tokens.findForNamespace(hash, 'ns')).toBe(first)

    const appendedTo = (ns: string) =>
      new Promise<void>((resolve) => {
        const off = backend.signals.onEvents((to) => to === ns && (off(), resolve()))
      })
    // A change of this process is told at its commit and, on Redis, again when its message comes back.
    const announced = (scope: ChangeScope, times = 1) =>
      new Promise<void>((resolve) => {
        let told = 0
        const off = backend.signals.onChanges(
          (change) => change.ns === 'ns' && change.scope === scope && ++told === times && (off(), resolve()),
        )
      })
    // A team change through this process ends the reuse at once (and announces itself to the others).
    const teamAnnounced = announced('access', backend.kind === 'redis' ? 2 : 1)
    await services.teams('ns').update((items) => ({
      items: items.set('ops', { id: 'ops', name: 'Ops', permissions: [], members: [], createdAt: '', updatedAt: '' }),
      result: null,
    }))
    const afterTeam = await services.tokens.findForNamespace(hash, 'ns')
    expect(afterTeam).not.toBe(first)
    expect(JSON.stringify(afterTeam.teams)).toContain('ops')
    await teamAnnounced

    // Revoked by another process (written straight to storage): an event of the namespace alone
    // does not end the reuse (#27: under load every call's audit event did); the announcement of
    // a change does.
    await services.tokens.findForNamespace(hash, 'ns')
    await backend.keyValue.set(keys.token(hash), { ...record, revokedAt: 'then' })
    expect((await services.tokens.findForNamespace(hash, 'ns')).token?.revokedAt).toBeUndefined()
    const appended = appendedTo('ns')
    const event = { id: 'ev-1', type: 'audit.token.revoked', time: new Date().toISOString(), namespace: 'ns' } as never
    await services.events.append([event])
    await appended
    expect((await services.tokens.findForNamespace(hash, 'ns')).token?.revokedAt).toBeUndefined()
    // Nor does a firewall write's announcement (what authenticating reads did not change).
    const firewallAnnounced = announced('firewalls')
    await backend.keyValue.transact([keys.firewallStamp('ns')], () => ({
      writes: { set: { [keys.firewallStamp('ns')]: 'changed' }, announce: { ns: 'ns', scope: 'firewalls' } },
      result: undefined,
    }))
    await firewallAnnounced
    expect((await services.tokens.findForNamespace(hash, 'ns')).token?.revokedAt).toBeUndefined()
    const accessAnnounced = announced('access')
    // As another process's team change writes: the teams document, announced.
    await backend.keyValue.transact([keys.teams('ns')], (values) => ({
      writes: { set: { [keys.teams('ns')]: values.get(keys.teams('ns')) }, announce: { ns: 'ns', scope: 'access' } },
      result: undefined,
    }))
    await accessAnnounced
    expect((await services.tokens.findForNamespace(hash, 'ns')).token?.revokedAt).toBe('then')

    // A revocation through this process is seen by the next read.
    const second = await issue('t2')
    const secondHash = hashToken(second.material)
    expect((await services.tokens.findForNamespace(secondHash, 'ns')).token?.revokedAt).toBeUndefined()
    await services.tokens.revoke(second.record, 'now')
    expect((await services.tokens.findForNamespace(secondHash, 'ns')).token?.revokedAt).toBe('now')
  })

  it('tokens: a reused authentication read ends after its interval (injected clock)', async () => {
    let now = 0
    const tokens = new TokenRepository(backend, { ttlMs: 1_000, max: 10 }, () => now)
    await services.namespaces.create({ id: 'ns', owner: 'owner', createdAt: new Date().toISOString() })
    const { record, material } = await issueToken(services, {
      ns: 'ns',
      kind: 'personal',
      name: 't',
      principalId: 'owner',
      createdBy: 'owner',
    })
    const hash = hashToken(material)
    await tokens.findForNamespace(hash, 'ns')
    await backend.signals.eventsReady()
    await tokens.findForNamespace(hash, 'ns')
    await backend.keyValue.set(keys.token(hash), { ...record, name: 'renamed' })
    now = 999
    expect((await tokens.findForNamespace(hash, 'ns')).token?.name).toBe('t')
    now = 1_000
    expect((await tokens.findForNamespace(hash, 'ns')).token?.name).toBe('renamed')
    // Unknown tokens are never kept.
    expect((await tokens.findForNamespace(hashToken('fwp_unknown-material'), 'ns')).token).toBeNull()
  })

  it('webhook cursors: a write reads the document in the same step, assuming the one held', async () => {
    const doc = (url: string) =>
      ({ id: 'wh', name: 'hook', url, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', createdAt: 't' }) as never
    const edit = (url: string) => services.webhooks.mutate('ns', 'wh', () => ({ next: doc(url), result: undefined }))
    const cursors = services.webhooks.cursors
    const move = (cursor: string, assumed: WebhookCursor | null, held: HeldDocument | null | undefined) =>
      cursors.updateReadingDocument(
        'ns',
        'wh',
        () => ({ next: { cursor, batch: null }, result: cursor }),
        assumed,
        held,
      )
    await edit('http://one.test/')
    const start = await cursors.get('ns', 'wh')

    const first = await move('1-0', start, undefined)
    expect(first.result).toBe('1-0')
    expect(first.document?.webhook).toMatchObject({ url: 'http://one.test/', secret: expect.stringMatching(/^whsec_/) })
    // Current: the held document comes back (on Redis without a read).
    const second = await move('2-0', { cursor: '1-0', batch: null }, first.document)
    expect(second.document?.webhook.url).toBe('http://one.test/')
    if (backend.kind === 'redis') expect(second.document).toBe(first.document)

    await edit('http://two.test/')
    const third = await move('3-0', { cursor: '2-0', batch: null }, second.document)
    expect(third.document?.webhook.url).toBe('http://two.test/')
    expect(await cursors.get('ns', 'wh')).toEqual({ cursor: '3-0', batch: null })

    // A stale assumed cursor is read again too: the change decides on the stored one.
    const seen: (string | null)[] = []
    await cursors.updateReadingDocument(
      'ns',
      'wh',
      (current) => {
        seen.push(current?.cursor ?? null)
        return { next: { cursor: '4-0', batch: null }, result: undefined }
      },
      { cursor: '2-0', batch: null },
      third.document,
    )
    expect(seen.at(-1)).toBe('3-0')

    await services.webhooks.mutate('ns', 'wh', () => ({ next: null, result: undefined }))
    expect((await move('5-0', null, third.document)).document).toBeNull()
  })

  it('failed deliveries: kept beyond the records for recover, each once, and removed with the webhook', async () => {
    const records = services.webhookRecords
    const record = (id: string, status: 'failed' | 'success') =>
      ({
        id,
        webhook: 'wh',
        status,
        createdAt: `2026-01-01T00:00:0${id.slice(-1)}.000Z`,
        source: { eventIds: [`ev-${id}`], after: null, last: '1-0' },
      }) as never
    await records.saveDelivery('ns', 'wh', 'whdel-1', () => record('whdel-1', 'failed'), { mayFail: true })
    await records.saveDelivery('ns', 'wh', 'whdel-1', () => record('whdel-1', 'failed'), { mayFail: true })
    await records.saveDelivery('ns', 'wh', 'whdel-2', () => record('whdel-2', 'success'), { mayFail: true })
    await records.saveDelivery('ns', 'wh', 'whdel-3', () => record('whdel-3', 'failed'), { mayFail: true })
    // Without `mayFail` the ledger is not even read: a failed status there stays out of it.
    await records.saveDelivery('ns', 'wh', 'whdel-4', () => record('whdel-4', 'failed'))
    expect((await records.listFailedDeliveries('ns', 'wh')).map((r) => r.id)).toEqual(['whdel-1', 'whdel-3'])
    expect(await backend.keyValue.get(webhookKeys.failedDelivery('ns', 'wh', 'whdel-1'))).toMatchObject({
      source: { eventIds: ['ev-whdel-1'] },
    })
    await records.deleteDeliveries('ns', 'wh')
    expect(await records.listFailedDeliveries('ns', 'wh')).toEqual([])
    expect(await backend.keyValue.get(webhookKeys.failedDelivery('ns', 'wh', 'whdel-3'))).toBeNull()
    expect(await backend.keyValue.get(webhookKeys.failedDeliveries('ns', 'wh'))).toBeNull()
  })

  it('redeliveries: queued up to the limit the caller gives; past it nothing is written and the answer says so', async () => {
    const records = services.webhookRecords
    const redelivery = (n: number) => ({
      deliveryId: `whdel-${n}`,
      eventIds: [`ev-${n}`],
      after: null,
      last: '1-0',
      position: null,
    })
    expect(await records.queueRedeliveries('ns', 'wh', [redelivery(1), redelivery(2)], 3)).toEqual({
      queued: true,
      waiting: 2,
    })
    expect(await records.queueRedeliveries('ns', 'wh', [redelivery(3), redelivery(4)], 3)).toEqual({
      queued: false,
      waiting: 2,
    })
    expect((await records.listRedeliveries('ns', 'wh')).map((r) => r.deliveryId)).toEqual(['whdel-1', 'whdel-2'])
    expect(await records.queueRedeliveries('ns', 'wh', [redelivery(3)], 3)).toEqual({ queued: true, waiting: 3 })
  })
})
