import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../support/admin'
import { apiClient, freePort } from '../support/server'
import { startTestProvider, TEST_CLIENT_ID, TEST_CLIENT_SECRET, type TestProvider } from '../support/oidc-provider'
import { NS, seedFirewall, signIn, startWorld, type World } from './harness'

/** The users page and `GET /v1/{ns}/users`: users from all three sources, their teams and tokens. */

let world: World
let idp: TestProvider
let carlToken: string

beforeAll(async () => {
  const port = await freePort()
  idp = await startTestProvider([`http://127.0.0.1:${port}/auth/callback`])
  world = await startWorld(
    { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: TEST_CLIENT_ID, OIDC_CLIENT_SECRET: TEST_CLIENT_SECRET },
    { port },
  )
  expect((await world.api('POST', `/v1/${NS}/teams`, { id: 'readers', name: 'Readers' })).status).toBe(201)
  carlToken = await createUser(world.server, 'carl', NS)
  await seedFirewall(world.api, 'main', { alice: ['fw:read'] })
  // alice signs in through the provider once, in the readers group.
  idp.accounts.set('alice', { groups: ['readers'] })
  idp.nextUser = 'alice'
  const context = await world.browser.newContext({ baseURL: world.server.url })
  const page = await context.newPage()
  await page.goto('/auth/sign-in')
  await page.waitForURL(`**/namespaces/${NS}`)
  await context.close()
}, 60_000)
afterAll(async () => {
  await world?.close()
  await idp?.close()
})

describe('GET /v1/{ns}/users', () => {
  it('lists every known user with teams, last sighting and source', async () => {
    const response = await world.api('GET', `/v1/${NS}/users`)
    expect(response.status).toBe(200)
    const byId = new Map((response.body as Array<{ id: string }>).map((user) => [user.id, user]))
    expect(byId.get('alice')).toMatchObject({ teams: ['readers'], source: 'oidc' })
    expect(byId.get('carl')).toMatchObject({ teams: [], source: 'admin', lastSeenAt: null })
    expect(byId.get('owner')).toMatchObject({ teams: [], source: 'bootstrap' })
    expect(Object.keys(byId.get('alice')!).sort()).toEqual(['id', 'lastSeenAt', 'source', 'teams'])
  })

  it('needs ns:teams:manage', async () => {
    const response = await apiClient(world.server.url, carlToken)('GET', `/v1/${NS}/users`)
    expect(response.status).toBe(403)
    expect(response.body.detail).toContain('ns:teams:manage')
  })

  it('is described in the OpenAPI document', async () => {
    const doc = (await fetch(`${world.server.url}/v1/openapi.json`).then((r) => r.json())) as {
      paths: Record<string, Record<string, { operationId: string }>>
    }
    expect(doc.paths['/v1/{ns}/users'].get.operationId).toBe('listUsers')
  })
})

describe('the users page', () => {
  it('shows users with their source, teams and tokens, and revokes a token', async () => {
    const { context, page } = await signIn(world)
    await page.getByRole('link', { name: 'Users', exact: true }).click()
    await page.waitForURL(`**/namespaces/${NS}/users`)
    const row = (id: string) => page.locator('#users tbody tr', { has: page.locator(`code:text-is("${id}")`) })
    expect(await row('alice').innerText()).toMatch(/identity provider[\s\S]*readers/)
    expect(await row('carl').innerText()).toMatch(/admin CLI[\s\S]*first token/)
    expect(await row('owner').innerText()).toContain('bootstrap')
    // Ids exactly as they are: no uppercasing anywhere.
    const shown = row('alice').getByTestId('user-id')
    expect(await shown.innerText()).toBe('alice')
    expect(await shown.evaluate((el) => getComputedStyle(el).textTransform)).toBe('none')

    expect((await apiClient(world.server.url, carlToken)('GET', `/v1/${NS}/teams`)).status).toBe(200)
    await row('carl').getByRole('button', { name: 'Revoke' }).click()
    await page.waitForURL(`**/namespaces/${NS}/users`)
    expect(await row('carl').innerText()).not.toContain('first token')
    expect((await apiClient(world.server.url, carlToken)('GET', `/v1/${NS}/teams`)).status).toBe(401)
    await context.close()
  })

  it('shows the principal of a permission row as it is, not uppercased', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/permissions`)
    const heading = page.locator('tr[data-principal="alice"] th')
    expect(await heading.innerText()).toBe('alice')
    await context.close()
  })

  it('offers known users, not a text box, when adding a team member', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/teams`)
    const picker = page.locator('select[name="userId"]').first()
    const choices = await picker.locator('option').evaluateAll((els) => els.map((el) => el.textContent))
    expect(choices).toEqual(['carl', 'owner']) // alice is a member already
    await picker.selectOption('carl')
    await page.getByRole('button', { name: 'Add member' }).first().click()
    await page.waitForURL(`**/namespaces/${NS}/teams`)
    const members = await world.api('GET', `/v1/${NS}/teams/readers/members`)
    expect(members.body.map((m: { userId: string }) => m.userId).sort()).toEqual(['alice', 'carl'])
    await context.close()
  })

  it('is not offered to, and refuses, a user without ns:teams:manage', async () => {
    const newToken = await createUser(world.server, 'dora', NS)
    const { context, page } = await signIn(world, newToken)
    expect(await page.getByRole('link', { name: 'Users', exact: true }).count()).toBe(0)
    const response = await page.goto(`/namespaces/${NS}/users`)
    expect(response?.status()).toBe(403)
    await context.close()
  })

  it('revokes only a token of the user its path names', async () => {
    const erinToken = await createUser(world.server, 'erin', NS)
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/users`)
    const form = page.locator('#users tbody tr', { has: page.locator('code:text-is("erin")') }).locator('form')
    // The same token id under another user's path: 404, and the token keeps working.
    await form.evaluate((el: HTMLFormElement) => {
      el.action = el.action.replace('/users/erin/', '/users/owner/')
    })
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      form.getByRole('button', { name: 'Revoke' }).click(),
    ])
    expect(response.status()).toBe(404)
    expect((await apiClient(world.server.url, erinToken)('GET', `/v1/${NS}/teams`)).status).toBe(200)
    await context.close()
  })
})
