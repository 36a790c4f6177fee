import { afterEach, describe, expect, it } from 'vitest'
import { createServices, type Services } from '../../server/app/services'
import { configFromEnv } from '../../server/app/config'
import { createNamespaceWithOwner, createUser } from '../../server/namespace/directory'
import { knownUsers, recordProviderSignIn } from '../../server/namespace/users'
import { makeBackend } from '../support/backends'
import { ManualClock } from '../support/manual-clock'

/** Provider sign-ins on real (fs) storage: users become known, teams follow the groups. */

let services: Services | undefined
afterEach(async () => services?.storage.close())

async function world() {
  const clock = new ManualClock(Date.parse('2026-05-01T10:00:00Z'))
  const backend = await makeBackend('fs')
  services = createServices(backend, { clock, config: configFromEnv({}) })
  await createNamespaceWithOwner(services, 'acme', 'owner', undefined, 'bootstrap')
  const now = new Date(clock.now()).toISOString()
  await services.teams('acme').update((items) => {
    for (const id of ['readers', 'writers'])
      items.set(id, { id, name: id, permissions: [], members: [], createdAt: now, updatedAt: now })
    return { items, result: undefined }
  })
  return { services, clock, backend }
}

describe('recordProviderSignIn', () => {
  it('makes a new user known (source oidc, last seen now) in the teams its groups name', async () => {
    const { services } = await world()
    const teams = await recordProviderSignIn(services, 'acme', 'alice', ['readers', 'not-a-team'])
    expect(teams).toEqual(['readers'])
    expect((await knownUsers(services, 'acme')).find((u) => u.id === 'alice')).toEqual({
      id: 'alice',
      teams: ['readers'],
      lastSeenAt: '2026-05-01T10:00:00.000Z',
      source: 'oidc',
    })
  })

  it('moves the user between teams as the groups change, and keeps the source of a known user', async () => {
    const { services, clock } = await world()
    await createUser(services, 'acme', 'carl')
    await recordProviderSignIn(services, 'acme', 'carl', ['readers'])
    clock.advance(60_000)
    expect(await recordProviderSignIn(services, 'acme', 'carl', ['writers'])).toEqual(['writers'])
    const carl = (await knownUsers(services, 'acme')).find((u) => u.id === 'carl')
    expect(carl).toEqual({ id: 'carl', teams: ['writers'], lastSeenAt: '2026-05-01T10:01:00.000Z', source: 'admin' })
    const readers = await services.teams('acme').find('readers')
    expect(readers?.members).toEqual([])
  })

  it('changes no team when the memberships stay: nothing announced, so no kept token lookup ends', async () => {
    const { services, clock, backend } = await world()
    await recordProviderSignIn(services, 'acme', 'dana', ['readers'])
    const before = await services.teams('acme').all()
    const announced: string[] = []
    const stop = backend.signals.onChanges((change) => announced.push(`${change.scope}:${change.ns}`))
    clock.advance(60_000)
    expect(await recordProviderSignIn(services, 'acme', 'dana', ['readers', 'not-a-team'])).toEqual(['readers'])
    expect(await services.teams('acme').all()).toEqual(before)
    expect(announced).toEqual([])
    // A membership that does change is announced (authentication reads the teams).
    expect(await recordProviderSignIn(services, 'acme', 'dana', ['writers'])).toEqual(['writers'])
    expect(announced).toEqual(['access:acme'])
    stop()
    expect((await knownUsers(services, 'acme')).find((u) => u.id === 'dana')?.lastSeenAt).toBe(
      '2026-05-01T10:01:00.000Z',
    )
  })

  it('refuses a namespace that does not exist, writing nothing', async () => {
    const { services } = await world()
    await expect(recordProviderSignIn(services, 'nope', 'alice', [])).rejects.toThrow(/namespace "nope"/)
    expect(await services.namespaces.users('nope').all()).toEqual([])
  })

  it('refuses an id that names a team or everybody, making no user of it', async () => {
    const { services } = await world()
    for (const id of ['readers', 'everybody'])
      await expect(recordProviderSignIn(services, 'acme', id, [], 'https://idp a')).rejects.toMatchObject({
        code: 'oidc_sign_in_refused',
      })
    expect((await knownUsers(services, 'acme')).map((u) => u.id)).toEqual(['owner'])
  })

  it('binds the id to the first provider account: another account under the same id is refused', async () => {
    const { services } = await world()
    await recordProviderSignIn(services, 'acme', 'owner', ['readers'], 'https://idp sub-1')
    await expect(
      recordProviderSignIn(services, 'acme', 'owner', ['writers'], 'https://idp sub-2'),
    ).rejects.toMatchObject({
      code: 'oidc_sign_in_refused',
    })
    // The refused sign-in changed no membership.
    expect((await services.teams('acme').find('writers'))?.members).toEqual([])
    expect(await recordProviderSignIn(services, 'acme', 'owner', ['writers'], 'https://idp sub-1')).toEqual(['writers'])
  })

  it('keeps the memberships when the answer holds no groups claim at all', async () => {
    const { services } = await world()
    await recordProviderSignIn(services, 'acme', 'alice', ['readers'], 'https://idp a')
    expect(await recordProviderSignIn(services, 'acme', 'alice', null, 'https://idp a')).toEqual(['readers'])
    expect(await recordProviderSignIn(services, 'acme', 'alice', [], 'https://idp a')).toEqual([])
  })
})
