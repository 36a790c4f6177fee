import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../support/redis'
import { startServer, type RunningServer } from '../support/server'

/**
 * Finding 7, dashboard part: every dashboard answer forbids framing and
 * sniffing, carries a CSP the pages actually obey, and keeps its Referer on this origin; signing
 * out ends the session on the server, so a copied cookie is worthless afterwards, in every
 * process sharing the storage.
 */

const TOKEN = 'fwp_dashboardHardeningOwner0123456789abcdef'
const NS = 'default'
const COOKIE = 'pf_dashboard'

const EXPECTED_HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
}

let a: RunningServer
let b: RunningServer

beforeAll(async () => {
  // Two processes on one Redis: a session started on one is checked (and ended) on the other.
  const env = {
    REDIS_URL: await redisUrl(),
    REDIS_PREFIX: uniquePrefix('dash-hard'),
    BOOTSTRAP_TOKEN: TOKEN,
    BOOTSTRAP_NAMESPACE: NS,
  }
  a = await startServer(env)
  b = await startServer(env)
  const created = await fetch(`${a.url}/v1/${NS}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'sink', url: 'https://hooks.example.com/in', eventTypes: ['config.*'] }),
  })
  expect(created.status).toBe(201)
}, 120_000)
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
})

/** The session cookie a response sets (`name=value`), if any. */
function cookieOf(response: Response): string | undefined {
  return response.headers
    .getSetCookie()
    .find((c) => c.startsWith(`${COOKIE}=`))
    ?.split(';')[0]
}

const csrfIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1]

function get(server: RunningServer, path: string, cookie?: string) {
  return fetch(server.url + path, { redirect: 'manual', headers: cookie ? { cookie } : {} })
}

function post(server: RunningServer, path: string, form: Record<string, string>, cookie?: string) {
  return fetch(server.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(form).toString(),
  })
}

/** Signs in over plain HTTP, as a browser would: returns the session cookie and its CSRF token. */
async function signIn(server: RunningServer): Promise<{ cookie: string; csrf: string }> {
  const form = await get(server, '/sign-in')
  const first = cookieOf(form)!
  const csrf = csrfIn(await form.text())!
  const signedIn = await post(server, '/sign-in', { _csrf: csrf, namespace: NS, token: TOKEN }, first)
  expect(signedIn.status).toBe(303)
  expect(signedIn.headers.get('location')).toBe(`/namespaces/${NS}`)
  const cookie = cookieOf(signedIn)!
  const page = await get(server, `/namespaces/${NS}/firewalls`, cookie)
  expect(page.status).toBe(200)
  return { cookie, csrf: csrfIn(await page.text())! }
}

function expectHardened(response: Response, what: string) {
  for (const [name, value] of Object.entries(EXPECTED_HEADERS))
    expect(response.headers.get(name), `${name} on ${what}`).toBe(value)
  const csp = response.headers.get('content-security-policy') ?? ''
  const directives = csp.split(';').map((d) => d.trim())
  expect(directives, `CSP on ${what}`).toContain("default-src 'self'")
  expect(directives, `CSP on ${what}`).toContain("frame-ancestors 'none'")
  // Nothing may loosen the policy for scripts or styles.
  expect(csp, `CSP on ${what}`).not.toMatch(/unsafe-inline|unsafe-eval|\*/)
}

/** What a CSP of `default-src 'self'` refuses in a page: inline scripts, style attributes and elements, handlers. */
function expectCspClean(html: string, what: string) {
  expect(html, `inline script in ${what}`).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i)
  expect(html, `style element in ${what}`).not.toMatch(/<style[\s>]/i)
  expect(html, `style attribute in ${what}`).not.toMatch(/<[^>]+\sstyle=/i)
  expect(html, `event handler in ${what}`).not.toMatch(/<[^>]+\son[a-z]+=/i)
  expect(html, `javascript: URL in ${what}`).not.toMatch(/javascript:/i)
}

describe('dashboard security headers', () => {
  it('are on every page, redirect, error page and asset, signed in or not', async () => {
    const { cookie } = await signIn(a)
    const signedInPages = [
      `/namespaces/${NS}/firewalls`,
      `/namespaces/${NS}/exception-requests`,
      `/namespaces/${NS}/webhooks`,
      `/namespaces/${NS}/teams`,
      `/namespaces/${NS}/tokens`,
      `/namespaces/${NS}/license-sets`,
      `/namespaces/${NS}/machines`,
      `/namespaces/${NS}/machines/webhook-delivery`,
    ]
    const webhooks = await fetch(`${a.url}/v1/${NS}/webhooks`, { headers: { authorization: `Bearer ${TOKEN}` } })
    const [webhook] = (await webhooks.json()) as { id: string }[]
    signedInPages.push(`/namespaces/${NS}/webhooks/${webhook.id}`)
    for (const path of signedInPages) {
      const response = await get(a, path, cookie)
      expect(response.status, path).toBe(200)
      expectHardened(response, path)
      expectCspClean(await response.text(), path)
    }
    const others: [string, number, string | undefined][] = [
      ['/', 302, undefined],
      ['/', 302, cookie],
      ['/sign-in', 200, undefined],
      [`/namespaces/${NS}/firewalls`, 303, undefined],
      [`/namespaces/${NS}/firewalls/missing`, 404, cookie],
      [`/namespaces/${NS}/no-such-page`, 404, cookie],
      ['/assets/dashboard.css', 200, undefined],
      ['/assets/dashboard.js', 200, undefined],
      ['/assets/constructor', 404, undefined],
    ]
    for (const [path, status, withCookie] of others) {
      const response = await get(a, path, withCookie)
      expect(response.status, path).toBe(status)
      expectHardened(response, path)
      const body = await response.text()
      if ((response.headers.get('content-type') ?? '').startsWith('text/html')) expectCspClean(body, path)
    }
    // Form posts: a refused sign-in, a forged action, and sign-out's redirect.
    const refused = await post(a, '/sign-in', { token: 'fwp_wrong' })
    expect(refused.status).toBe(403)
    expectHardened(refused, 'POST /sign-in')
    const forged = await post(a, `/namespaces/${NS}/teams`, { name: 'x' }, cookie)
    expect(forged.status).toBe(403)
    expectHardened(forged, 'forged action')
  })

  it('serve the diagrams their styles from the stylesheet, since the CSP refuses inline ones', async () => {
    const css = await (await get(a, '/assets/dashboard.css')).text()
    expect(css).toContain('.machine-svg .state.is-active > rect.box')
  })

  it('leave the API and the registry alone', async () => {
    const api = await fetch(`${a.url}/v1/${NS}/me`, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(api.status).toBe(200)
    expect(api.headers.get('content-security-policy')).toBeNull()
  })
})

describe('sign-out', () => {
  it('ends the session on the server: a copied cookie gets the sign-in page in every process', async () => {
    const { cookie, csrf } = await signIn(a)
    const copied = cookie
    // The session is known to the other process too (same Redis).
    expect((await get(b, `/namespaces/${NS}/teams`, copied)).status).toBe(200)
    const other = await signIn(b)

    const out = await post(a, '/sign-out', { _csrf: csrf }, cookie)
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toContain('/sign-in?signed-out')

    for (const server of [a, b]) {
      const page = await get(server, `/namespaces/${NS}/firewalls`, copied)
      expect(page.status).toBe(303)
      expect(page.headers.get('location')).toMatch(/^\/sign-in\?/)
      const root = await get(server, '/', copied)
      expect(root.headers.get('location')).toBe('/sign-in')
      // Actions and live streams refuse it as well.
      const action = await post(server, `/namespaces/${NS}/teams`, { _csrf: csrf, name: 'after-sign-out' }, copied)
      expect(action.status).toBe(303)
      expect(action.headers.get('location')).toMatch(/^\/sign-in/)
      const webhooks = (await (
        await fetch(`${a.url}/v1/${NS}/webhooks`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as { id: string }[]
      const live = await get(server, `/namespaces/${NS}/live/webhooks/${webhooks[0].id}`, copied)
      expect(live.status).toBe(401)
      await live.body?.cancel()
    }
    const teams = await fetch(`${a.url}/v1/${NS}/teams`, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(((await teams.json()) as { name: string }[]).map((t) => t.name)).not.toContain('after-sign-out')

    // Another session of the same token is not affected.
    expect((await get(a, `/namespaces/${NS}/teams`, other.cookie)).status).toBe(200)
  })
})
