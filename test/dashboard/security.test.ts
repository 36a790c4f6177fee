import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminCli, createUser } from '../support/admin'
import { NS, requestException, seedFirewall, signIn, startWorld, type World } from './harness'

/** The dashboard does only what the permission module allows, and only with a CSRF token. */

let world: World
let viewerToken: string

beforeAll(async () => {
  world = await startWorld()
  viewerToken = await createUser(world.server, 'viewer', NS)
  // The viewer may read the firewall and request exceptions, but not decide them.
  await seedFirewall(world.api, 'main', { everybody: ['fw:access'], viewer: ['fw:read', 'fw:access'] })
})
afterAll(async () => world?.close())

const csrfOf = (page: import('playwright-core').Page) =>
  page.locator('input[name="_csrf"]').first().getAttribute('value')

describe('dashboard security', () => {
  it('signs a token into its own namespace, whatever the namespace field says', async () => {
    const otherOwner = await adminCli(world.server, 'create-namespace', '--namespace', 'other-ns', '--user', 'olga')
    const context = await world.browser.newContext({ baseURL: world.server.url })
    const page = await context.newPage()
    await page.goto('/sign-in')
    await page.getByLabel('Access token').fill(otherOwner)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL('**/namespaces/other-ns')
    expect(await page.locator('header').innerText()).toContain('olga')
    await context.close()
  })

  it('shows no approve button to a user without the permission and answers a forged approval 403', async () => {
    const request = await requestException(world.api, 'main', 'lodash')
    const { context, page } = await signIn(world, viewerToken)
    const path = `/namespaces/${NS}/firewalls/main/exception-requests/${request.id}`
    await page.goto(path)
    expect(await page.getByTestId('request-status').textContent()).toContain('pending')
    expect(await page.getByRole('button', { name: /Approve/ }).count()).toBe(0)
    expect(await page.getByRole('button', { name: /Deny/ }).count()).toBe(0)
    // A forged form post with the viewer's own valid CSRF token: refused by the permission module.
    const csrf = await csrfOf(page)
    const forged = await page.request.post(`${path}/approve`, {
      form: {
        _csrf: csrf!,
        exception: JSON.stringify({ id: 'ex-forged', rule: 'min-age', selector: { packageName: 'lodash' } }),
      },
      maxRedirects: 0,
    })
    expect(forged.status()).toBe(403)
    expect(await forged.text()).toContain('fw:update:exception')
    const denied = await page.request.post(`${path}/deny`, { form: { _csrf: csrf!, comment: 'no' }, maxRedirects: 0 })
    expect(denied.status()).toBe(403)
    const stored = (await world.api('GET', `/v1/${NS}/config/main/exception-requests/${request.id}`)).body
    expect(stored.status).toBe('pending')
    expect((await world.api('GET', `/v1/${NS}/config/main`)).body.exceptions).toEqual([])
    await context.close()
  })

  it('refuses a form post without the CSRF token, or with a wrong one, even from the owner', async () => {
    const request = await requestException(world.api, 'main', 'chalk')
    const { context, page } = await signIn(world)
    const path = `/namespaces/${NS}/firewalls/main/exception-requests/${request.id}/approve`
    const exception = JSON.stringify({ id: 'ex-chalk', rule: 'min-age', selector: { packageName: 'chalk' } })
    const missing = await page.request.post(path, { form: { exception }, maxRedirects: 0 })
    expect(missing.status()).toBe(403)
    expect(await missing.text()).toContain('CSRF')
    const wrong = await page.request.post(path, { form: { exception, _csrf: 'not-the-token' }, maxRedirects: 0 })
    expect(wrong.status()).toBe(403)
    const rollback = await page.request.post(`/namespaces/${NS}/firewalls/main/versions/1/rollback`, {
      form: {},
      maxRedirects: 0,
    })
    expect(rollback.status()).toBe(403)
    expect((await world.api('GET', `/v1/${NS}/config/main/exception-requests/${request.id}`)).body.status).toBe(
      'pending',
    )
    // The same post with the session's token goes through.
    await page.goto(`/namespaces/${NS}/firewalls/main`)
    const ok = await page.request.post(path, { form: { exception, _csrf: (await csrfOf(page))! }, maxRedirects: 0 })
    expect(ok.status()).toBe(303)
    await context.close()
  })

  it('hides management forms from a user without namespace permissions and refuses forged ones', async () => {
    const { context, page } = await signIn(world, viewerToken)
    await page.goto(`/namespaces/${NS}/teams`)
    expect(await page.getByRole('button', { name: 'Create team' }).count()).toBe(0)
    const forged = await page.request.post(`/namespaces/${NS}/teams`, {
      form: { _csrf: (await csrfOf(page))!, name: 'Admins', permissions: 'ns:admin' },
      maxRedirects: 0,
    })
    expect(forged.status()).toBe(403)
    expect((await page.goto(`/namespaces/${NS}/webhooks`))?.status()).toBe(403)
    await context.close()
  })

  it('creates a personal token and shows it exactly once', async () => {
    const { context, page } = await signIn(world, viewerToken)
    await page.goto(`/namespaces/${NS}/tokens`)
    await page.getByLabel('Name').first().fill('ci laptop')
    await page.getByRole('button', { name: 'Create personal token' }).click()
    const token = (await page.getByTestId('new-token').textContent())!.trim()
    expect(token).toMatch(/^fwp_/)
    expect(
      (await fetch(`${world.server.url}/v1/${NS}/me`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200)
    await page.goto(`/namespaces/${NS}/tokens`)
    expect(await page.content()).not.toContain(token)
    expect(await page.locator('#personal').textContent()).toContain('ci laptop')
    await context.close()
  })
})

describe('content security policy', () => {
  it('was never violated by a page of this suite', () => {
    expect(world.cspViolations).toEqual([])
  })
})
