import { emptyFirewall } from '../support/documents'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import type { Backend } from '../../storage'
import { createServices, type Services } from '../../server/app/services'
import { issueToken } from '../../server/namespace/tokens'
import { keys } from '../../storage/repositories/keys'
import { ExceptionRequestRepository, exceptionRequestKeys } from '../../storage/repositories/exception-requests'
import type { Team } from '../../server/namespace/schema'

/** Ids a plain object would answer for by itself. */
const BUILT_INS = ['constructor', 'valueOf', 'toString', 'hasOwnProperty', '__proto__']

const team = (id: string): Team => ({ id, name: id, permissions: [], members: [], createdAt: 't', updatedAt: 't' })
const firewall = emptyFirewall

describe.each(BACKEND_KINDS)('repositories with built-in property names as ids (%s)', (kind) => {
  let backend: Backend
  let services: Services
  beforeEach(async () => {
    backend = await makeBackend(kind)
    services = createServices(backend)
  })
  afterEach(async () => {
    await backend.close()
  })

  it('collections find nothing for an absent id, then hold each id as an ordinary item', async () => {
    const teams = services.teams('ns')
    await teams.update((items) => ({ items: items.set('ordinary', team('ordinary')), result: null }))
    for (const id of BUILT_INS) expect(await teams.find(id), id).toBeNull()
    for (const id of BUILT_INS.filter((id) => id !== '__proto__')) {
      const seen = await teams.update((items) => ({ items: items.set(id, team(id)), result: items.has(id) }))
      expect(seen).toBe(true)
      expect(await teams.find(id)).toEqual(team(id))
    }
    expect((await teams.all()).map((t) => t.id).sort()).toEqual([
      'constructor',
      'hasOwnProperty',
      'ordinary',
      'toString',
      'valueOf',
    ])
    // The stored layout is unchanged: one object of items keyed by id.
    const stored = await backend.keyValue.get<{ items: Record<string, Team> }>(keys.teams('ns'))
    expect(Object.keys(stored!.items).sort()).toEqual([
      'constructor',
      'hasOwnProperty',
      'ordinary',
      'toString',
      'valueOf',
    ])
    await teams.update((items) => ({ items, result: items.delete('valueOf') }))
    expect(await teams.find('valueOf')).toBeNull()
  })

  it('collections read an item stored under a built-in name from a document written elsewhere', async () => {
    await backend.keyValue.set(keys.licenseSets('ns'), {
      items: { toString: { id: 'toString', name: 'n', licenses: ['MIT'], createdAt: 't', updatedAt: 't' } },
    })
    expect((await services.licenseSets('ns').find('toString'))?.licenses).toEqual(['MIT'])
    expect(await services.licenseSets('ns').find('constructor')).toBeNull()
  })

  it('collections leave out what an old `PUT /teams/valueOf` stored (no id, no members) and drop it on the next write', async () => {
    await backend.keyValue.set(keys.teams('ns'), {
      items: { valueOf: { name: 'n', permissions: [], updatedAt: 't' }, ok: team('ok') },
    })
    const teams = services.teams('ns')
    expect(await teams.all()).toEqual([team('ok')])
    expect(await teams.find('valueOf')).toBeNull()
    await teams.update((items) => ({ items: items.set('valueOf', team('valueOf')), result: null }))
    expect((await backend.keyValue.get<{ items: Record<string, Team> }>(keys.teams('ns')))!.items).toEqual({
      ok: team('ok'),
      valueOf: team('valueOf'),
    })
  })

  it('namespace users: an owner named `constructor` is a user like any other', async () => {
    expect(await services.namespaces.create({ id: 'valueOf', owner: 'constructor', createdAt: 't' })).toBe(true)
    expect(await services.namespaces.users('valueOf').all()).toEqual([
      { id: 'constructor', createdAt: 't', source: 'admin' },
    ])
    expect(await services.namespaces.users('valueOf').find('toString')).toBeNull()
  })

  it('tokens: an id named after a built-in finds no token, and revoking keeps the index an index', async () => {
    const { record } = await issueToken(services, {
      ns: 'ns',
      kind: 'personal',
      name: 't',
      principalId: 'u',
      createdBy: 'u',
    })
    for (const id of BUILT_INS) expect(await services.tokens.findById('ns', id), id).toBeNull()
    expect((await services.tokens.findById('ns', record.id))?.hash).toBe(record.hash)
    await services.tokens.revoke(record, 'now')
    expect(await services.tokens.list('ns')).toEqual([])
    expect(await backend.keyValue.get(keys.tokenIndex('ns'))).toEqual({ items: {} })
  })

  it('exception-request indexes have no inherited entries', async () => {
    const repo = new ExceptionRequestRepository(backend)
    await backend.keyValue.set(exceptionRequestKeys.index('ns', 'fw'), {
      items: { 'exr-1': { status: 'pending', requestedBy: 'u', rule: 'r', packageName: 'p' } },
    })
    const index = await repo.index('ns', 'fw')
    for (const id of BUILT_INS) expect(index[id], id).toBeUndefined()
    expect(index['exr-1']?.status).toBe('pending')
  })

  it('firewalls: one named `constructor` is created, deleted and recreated with its version continued', async () => {
    const put = () =>
      services.firewalls.mutate('ns', 'constructor', {}, 'now', (current) => ({
        next: current ?? firewall('constructor'),
        summary: 's',
        result: (s) => s,
      }))
    expect((await put())?.version).toBe(1)
    expect((await services.firewalls.list('ns')).map((fw) => fw.id)).toEqual(['constructor'])
    await services.firewalls.mutate('ns', 'constructor', {}, 'now', () => ({
      next: null,
      summary: 'deleted',
      result: () => null,
    }))
    expect(await services.firewalls.list('ns')).toEqual([])
    expect((await put())?.version).toBe(2)
  })
})
