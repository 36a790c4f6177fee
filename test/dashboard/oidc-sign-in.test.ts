import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../support/server'
import { startTestProvider, TEST_CLIENT_ID, TEST_CLIENT_SECRET, type TestProvider } from '../support/oidc-provider'
import { NS, seedFirewall, startWorld, type World } from './harness'

/**
 * Sign-in through a real OpenID provider (oidc-provider on loopback): Chromium for the journey,
 * plain HTTP for the refusals (a tampered state, nonce or issuer, an expired code).
 */

let world: World
let idp: TestProvider

beforeAll(async () => {
  const port = await freePort()
  idp = await startTestProvider([`http://127.0.0.1:${port}/auth/callback`])
  world = await startWorld(
    { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: TEST_CLIENT_ID, OIDC_CLIENT_SECRET: TEST_CLIENT_SECRET },
    { port },
  )
  // Only the owner may read "main" directly; the team "readers" reads every firewall.
  await seedFirewall(world.api, 'main', {})
  const team = await world.api('POST', `/v1/${NS}/teams`, { id: 'readers', name: 'Readers', permissions: ['fw:read'] })
  expect(team.status).toBe(201)
}, 60_000)
afterAll(async () => {
  await world?.close()
  await idp?.close()
})

async function providerSignIn(user: string, groups: string[]) {
  idp.accounts.set(user, { groups })
  idp.nextUser = user
  const context = await world.browser.newContext({ baseURL: world.server.url })
  const page = await context.newPage()
  await page.goto('/sign-in')
  const button = page.getByRole('link', { name: /^Sign in with / })
  await button.click()
  await page.waitForURL(`**/namespaces/${NS}`)
  return { context, page }
}

const users = async () => (await world.api('GET', `/v1/${NS}/users`)).body as Array<Record<string, unknown>>

describe('sign-in through an OpenID provider', () => {
  it('offers the provider first on the sign-in page', async () => {
    const response = await fetch(`${world.server.url}/sign-in`)
    const markup = await response.text()
    const provider = markup.indexOf(`Sign in with ${new URL(idp.issuer).host}`)
    expect(provider).toBeGreaterThan(0)
    expect(provider).toBeLessThan(markup.indexOf('Access token'))
  })

  it('signs a user in, makes them known and gives them the teams their groups name', async () => {
    const { context, page } = await providerSignIn('alice', ['readers', 'no-such-team'])
    expect(await page.locator('header').innerText()).toContain('alice')
    // The team's fw:read makes the closed firewall visible to alice.
    await expect(page.getByRole('link', { name: /main/ }).first().count()).resolves.toBeGreaterThan(0)
    const settings = await page.goto(`/namespaces/${NS}/firewalls/main`)
    expect(settings?.status()).toBe(200)
    const alice = (await users()).find((u) => u.id === 'alice')
    expect(alice).toMatchObject({ id: 'alice', teams: ['readers'], source: 'oidc' })
    expect(typeof alice?.lastSeenAt).toBe('string')
    await context.close()
  })

  it('takes a team away when the groups no longer name it, so the permissions follow', async () => {
    const { context, page } = await providerSignIn('alice', [])
    const settings = await page.goto(`/namespaces/${NS}/firewalls/main`)
    expect(settings?.status()).toBe(404)
    expect((await users()).find((u) => u.id === 'alice')?.teams).toEqual([])
    await context.close()
  })

  it('ends the session on the server at sign-out: a copied cookie stops working', async () => {
    const { context, page } = await providerSignIn('bob', ['readers'])
    const cookies = await context.cookies()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL('**/sign-in?signed-out*')
    const copy = await world.browser.newContext({ baseURL: world.server.url })
    await copy.addCookies(cookies)
    const copied = await copy.newPage()
    await copied.goto(`/namespaces/${NS}/firewalls/main`)
    expect(new URL(copied.url()).pathname).toBe('/sign-in')
    await copy.close()
    await context.close()
  })
})

/** A cookie jar of name=value pairs per origin (enough for these two servers). */
class Jar {
  private readonly cookies = new Map<string, string>()
  take(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair.indexOf('=')
      const value = pair.slice(eq + 1)
      if (value) this.cookies.set(pair.slice(0, eq), value)
      else this.cookies.delete(pair.slice(0, eq))
    }
  }
  header() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }
}

const get = (url: string, jar: Jar) => fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } })

/**
 * Starts a sign-in at the dashboard and follows the provider to the callback URL it redirects
 * to, without calling it. `tamper` may change the authorization request first.
 */
async function toCallback(user: string, tamper: (url: URL) => void = () => undefined) {
  idp.accounts.set(user, { groups: [] })
  idp.nextUser = user
  const dashboard = new Jar()
  const start = await get(`${world.server.url}/auth/sign-in`, dashboard)
  expect(start.status).toBe(303)
  dashboard.take(start)
  const authorize = new URL(start.headers.get('location')!)
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256')
  tamper(authorize)
  const provider = new Jar()
  let location = authorize.href
  for (let hop = 0; hop < 10 && !location.startsWith(world.server.url); hop++) {
    const response = await get(new URL(location, idp.issuer).href, provider)
    provider.take(response)
    expect([302, 303]).toContain(response.status)
    location = new URL(response.headers.get('location')!, idp.issuer).href
  }
  const callback = new URL(location)
  expect(callback.pathname).toBe('/auth/callback')
  return { callback, dashboard }
}

async function finish(callback: URL, dashboard: Jar) {
  const response = await get(callback.href, dashboard)
  dashboard.take(response)
  const body = await response.text()
  // Whatever the callback answered, the browser's cookies must not open a page.
  const after = await get(`${world.server.url}/namespaces/${NS}/firewalls`, dashboard)
  return { status: response.status, body, signedIn: after.status === 200, location: response.headers.get('location') }
}

describe('the callback refuses what it cannot check', () => {
  it('accepts an untampered answer (the control for the refusals below)', async () => {
    const { callback, dashboard } = await toCallback('carol')
    const result = await finish(callback, dashboard)
    expect(result.status).toBe(303)
    expect(result.location).toBe(`/namespaces/${NS}`)
    expect(result.signedIn).toBe(true)
  })

  it('refuses a wrong state', async () => {
    const { callback, dashboard } = await toCallback('mallory')
    callback.searchParams.set('state', 'forged-state')
    const result = await finish(callback, dashboard)
    expect(result.status).toBe(401)
    expect(result.body).toMatch(/state/i)
    expect(result.signedIn).toBe(false)
  })

  it('refuses an ID token with a wrong nonce', async () => {
    const { callback, dashboard } = await toCallback('mallory', (url) => url.searchParams.set('nonce', 'forged-nonce'))
    const result = await finish(callback, dashboard)
    expect(result.status).toBe(401)
    expect(result.body).toMatch(/nonce/i)
    expect(result.signedIn).toBe(false)
  })

  it('refuses an expired code', async () => {
    const { callback, dashboard } = await toCallback('mallory')
    idp.expireCodes = true
    try {
      const result = await finish(callback, dashboard)
      expect(result.status).toBe(401)
      expect(result.body).toMatch(/invalid_grant/)
      expect(result.signedIn).toBe(false)
    } finally {
      idp.expireCodes = false
    }
  })

  it('refuses an answer from another issuer', async () => {
    const { callback, dashboard } = await toCallback('mallory')
    expect(callback.searchParams.get('iss')).toBe(idp.issuer)
    callback.searchParams.set('iss', 'http://127.0.0.1:9/')
    const result = await finish(callback, dashboard)
    expect(result.status).toBe(401)
    expect(result.body).toMatch(/iss/i)
    expect(result.signedIn).toBe(false)
  })

  it('refuses a callback with no sign-in in progress', async () => {
    const { callback } = await toCallback('mallory')
    const result = await finish(callback, new Jar())
    expect(result.status).toBe(401)
    expect(result.signedIn).toBe(false)
    expect((await users()).some((u) => u.id === 'mallory')).toBe(false)
  })
})
