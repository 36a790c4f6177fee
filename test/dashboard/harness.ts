import { eventually as readUntil } from '../support/wait-for'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../support/chromium'

/**
 * The dashboard suites' world: the built server (SERVER_ENTRY, default .output) on a fresh data
 * dir with a known bootstrap token, Debian's Chromium driven by playwright-core, and helpers
 * to sign in and seed data through the public API.
 */

export const NS = 'default'
export const OWNER_TOKEN = 'fwp_dashboardOwnerToken0123456789abcdefghij'

export interface World {
  server: RunningServer
  browser: Browser
  api: Api
  /** Content-Security-Policy violations any page of any context reported (each suite expects none). */
  cspViolations: string[]
  close(): Promise<void>
}

/**
 * Records every CSP violation of the context's pages: Chromium's console report ("Refused to
 * ... violates the following Content Security Policy directive") and the DOM's
 * `securitypolicyviolation` event, which an init script (not subject to the page's CSP) logs.
 */
export async function watchCsp(context: BrowserContext, sink: string[]): Promise<void> {
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`),
    )
  })
  context.on('console', (message) => {
    const text = message.text()
    if (/Content Security Policy|CSP violation/.test(text)) sink.push(`${message.page()?.url() ?? '?'}: ${text}`)
  })
}

/**
 * Off unless set: TEST_DASHBOARD_DELAY_CSS / TEST_DASHBOARD_DELAY_JS (milliseconds) hold back every
 * stylesheet / the deferred dashboard.js, so a test that relies on a page a click opened before
 * that page has loaded fails every time instead of now and then under load (docs/testing.md).
 */
async function delayAssets(context: BrowserContext): Promise<void> {
  const delays: [string, string | undefined][] = [
    ['**/*.css', process.env.TEST_DASHBOARD_DELAY_CSS],
    ['**/assets/dashboard.js', process.env.TEST_DASHBOARD_DELAY_JS],
  ]
  for (const [pattern, ms] of delays)
    if (ms)
      await context.route(pattern, async (route) => {
        await new Promise((resolve) => setTimeout(resolve, Number(ms)))
        await route.continue()
      })
}

export async function startWorld(env: Record<string, string> = {}, options: { port?: number } = {}): Promise<World> {
  const server = await startServer({ BOOTSTRAP_TOKEN: OWNER_TOKEN, BOOTSTRAP_NAMESPACE: NS, ...env }, options)
  // The run's Chromium (test/support/global-chromium.ts), else one of this suite's own. A browser
  // that cannot start (chromium missing) must not leave the server behind: the suite's afterAll
  // has no world to close.
  const shared = process.env.TEST_CHROMIUM_WS
  const browser = await (
    shared
      ? chromium.connect(shared)
      : chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS })
  ).catch(async (error) => {
    await server.stop()
    throw error
  })
  const cspViolations: string[] = []
  // Every context any suite opens is watched, however it was created.
  const newContext = browser.newContext.bind(browser)
  browser.newContext = async (options) => {
    const context = await newContext(options)
    await watchCsp(context, cspViolations)
    await delayAssets(context)
    return context
  }
  return {
    server,
    browser,
    cspViolations,
    api: apiClient(server.url, OWNER_TOKEN),
    async close() {
      await browser.close().catch(() => undefined)
      await server.stop()
    },
  }
}

/**
 * A new browser context (own cookies, own session) signed in with `token`, its page on the namespace
 * home; confirm dialogs are accepted. The sign-in form is posted by the context's own HTTP client
 * (its cookies are the page's): the same GET /sign-in for the CSRF field and POST /sign-in the
 * browser makes, without rendering and typing into the form, about half of a sign-in's time
 * (0.9 s against 1.5-2.3 s at load 11). `signInThroughForm` drives the form itself.
 */
export async function signIn(
  world: World,
  token = OWNER_TOKEN,
  viewport = { width: 1280, height: 900 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await world.browser.newContext({ viewport, baseURL: world.server.url })
  const form = await context.request.get('/sign-in')
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1]
  if (!csrf) throw new Error(`no CSRF field on the sign-in form (${form.status()})`)
  const signedIn = await context.request.post('/sign-in', {
    form: { _csrf: csrf, namespace: NS, token },
    maxRedirects: 0,
  })
  // Where the form's 303 leads: the namespace home.
  const home = signedIn.headers().location
  if (signedIn.status() !== 303 || !home)
    throw new Error(`sign-in failed: ${signedIn.status()} ${await signedIn.text()}`)
  const page = await context.newPage()
  page.on('dialog', (dialog) => void dialog.accept())
  await page.goto(home)
  return { context, page }
}

/** As `signIn`, through the sign-in page in the browser: the fields filled and the button clicked. */
export async function signInThroughForm(
  world: World,
  token = OWNER_TOKEN,
  viewport = { width: 1280, height: 900 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await world.browser.newContext({ viewport, baseURL: world.server.url })
  const page = await context.newPage()
  page.on('dialog', (dialog) => void dialog.accept())
  await page.goto('/sign-in')
  await page.getByLabel('Namespace').fill(NS)
  await page.getByLabel('Access token').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  // The namespace home: the firewalls for who reads one, the developer's home for the others.
  await page.waitForURL((url) => url.pathname === `/namespaces/${NS}/firewalls` || url.pathname === `/namespaces/${NS}`)
  return { context, page }
}

/** A firewall with one blocking rule, so exceptions and requests have something to name. */
export async function seedFirewall(
  api: Api,
  id = 'main',
  permissions: Record<string, string[]> = { everybody: ['fw:access'] },
) {
  const body = {
    ecosystem: 'npm',
    name: `Firewall ${id}`,
    description: 'Seeded by the dashboard tests',
    upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }],
    rules: [
      {
        id: 'min-age',
        executionPhase: 'download',
        selector: { function: { name: 'minimumAge', duration: '72h' } },
        description: 'Wait three days',
      },
    ],
    exceptions: [],
    permissions,
  }
  const response = await api('PUT', `/v1/${NS}/config/${id}`, body)
  if (response.status >= 300)
    throw new Error(`seeding firewall failed: ${response.status} ${JSON.stringify(response.body)}`)
  return response.body
}

export async function requestException(api: Api, fw: string, packageName: string, exceptionId = `ex-${packageName}`) {
  const response = await api('POST', `/v1/${NS}/config/${fw}/exception-requests`, {
    proposedException: { id: exceptionId, rule: 'min-age', selector: { packageName, version: '1.0.0' } },
    justification: `We need ${packageName} now`,
  })
  if (response.status !== 201) throw new Error(`request failed: ${response.status} ${JSON.stringify(response.body)}`)
  return response.body as { id: string }
}

/** A webhook receiver on 127.0.0.1 whose status and delay the test controls. */
export class TestReceiver {
  status = 500
  delayMs = 0
  hits = 0
  /** The request headers of every delivery, in arrival order. */
  readonly headers: IncomingHttpHeaders[] = []
  private server!: Server
  url = ''

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        this.hits++
        this.headers.push(req.headers)
        setTimeout(
          () =>
            res
              .writeHead(this.status, { 'content-type': 'application/json' })
              .end(JSON.stringify({ receivedBy: 'dashboard-test' })),
          this.delayMs,
        )
      })
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
    return this
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/** Polls `check` until it returns a truthy value or the time runs out (test/support/wait-for.ts). */
export async function eventually<T>(
  check: () => Promise<T>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  return (await readUntil(check, { timeoutMs, what, accept: Boolean, intervalMs: 100 })) as NonNullable<T>
}
