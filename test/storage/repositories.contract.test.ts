import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import type { Backend } from '../../storage'
import { createServices, type Services } from '../../server/app/services'
import { issueToken } from '../../server/namespace/tokens'
import { hashToken } from '../../server/auth/tokens'
import type { Firewall } from '../../server/firewall/schema'

const firewall = (id: string): Firewall => ({
  id, version: 0, ecosystem: 'npm', name: id, description: '', upstreams: [], rules: [], exceptions: [], permissions: {}, extends: [], updatedAt: '',
})

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
    const { record, material } = await issueToken(services, { ns: 'ns', kind: 'personal', name: 't', principalId: 'u', createdBy: 'u' })
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
        teams.update((items) => ({ items: items.set(`t${i}`, { id: `t${i}`, name: 'n', permissions: [], members: [], createdAt: '', updatedAt: '' }), result: null })),
      ),
    )
    expect((await teams.all()).length).toBe(25)
    expect(await teams.find('t3')).toMatchObject({ id: 't3' })
  })

  it('firewalls: versions, history and continuation after delete', async () => {
    const repo = services.firewalls
    const put = (summary: string) =>
      repo.mutate('ns', 'fw', {}, 'now', (current) => ({ next: { ...(current ?? firewall('fw')), description: summary }, summary, result: (s) => s }))
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
    expect(await backend.logLength('events')).toBe(0)
  })
})
