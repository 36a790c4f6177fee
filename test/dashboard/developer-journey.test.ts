import { resolve } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../support/admin'
import { apiClient, freePort } from '../support/server'
import { startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { npmClient, publishFixtures } from '../registry/npm-cli'
import { NS, signIn, startWorld, type World } from './harness'

/**
 * A developer with `fw:access` only, from a blocked `npm install` (real npm through the built
 * server, Verdaccio as the upstream) to an approved exception, in Chromium; every link of every
 * page on the way answers them with a page (no 403, no 404). The reviewer decides from the facts
 * panel. A user without a grant learns that access may be what is missing.
 */

let world: World
let registry: Verdaccio
let devToken: string
let dev2Token: string
let reviewerToken: string
let strangerToken: string
let blockOutput: string
let registryUrl: string

const LINK = new RegExp(
  `http://127\\.0\\.0\\.1:\\d+/namespaces/${NS}/firewalls/web/exception-requests/new\\?request=(req-[A-Za-z0-9_-]+)`,
)

beforeAll(async () => {
  registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, [
    { name: 'fw-vuln', version: '1.0.0', license: 'MIT', scripts: { postinstall: 'node -e "process.exit(0)"' } },
    { name: 'fw-vuln', version: '1.1.0', license: 'Apache-2.0' },
  ])
  world = await startWorld({
    UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    ADVISORY_DIR: resolve('test/fixtures/advisories'),
  })
  devToken = await createUser(world.server, 'dev')
  dev2Token = await createUser(world.server, 'dev2')
  reviewerToken = await createUser(world.server, 'reviewer')
  strangerToken = await createUser(world.server, 'stranger')
  const put = await world.api('PUT', `/v1/${NS}/config/web`, {
    ecosystem: 'npm',
    name: 'Web apps',
    upstreams: [{ id: 'verdaccio', endpoint: registry.url }],
    rules: [
      {
        id: 'no-vulnerable',
        executionPhase: 'download',
        selector: { function: { name: 'vulnerability', minSeverity: 'high' } },
        description: 'known high or critical vulnerabilities',
      },
    ],
    permissions: { dev: ['fw:access'], dev2: ['fw:access'], reviewer: ['fw:read', 'fw:update:exception'] },
  })
  expect(put.status).toBe(201)
  registryUrl = `${world.server.url}/registry/${NS}/web/`
  const blocked = await npmClient(registryUrl, devToken).npm(['install', 'fw-vuln@1.0.0'])
  expect(blocked.code).not.toBe(0)
  blockOutput = blocked.output
}, 180_000)

afterAll(async () => {
  await world?.close()
  await registry?.stop()
})

/** Text as read: runs of white space (the markup's line breaks) as one space. */
const words = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim()

/** Every same-site link of the page, fetched as the signed-in user: none may answer 4xx/5xx. */
async function expectEveryLinkOpens(page: Page, context: BrowserContext): Promise<string[]> {
  const hrefs = await page.$$eval('a[href]', (links) => links.map((a) => (a as HTMLAnchorElement).href))
  const own = [...new Set(hrefs.map((h) => h.split('#')[0]))].filter((h) => h.startsWith(world.server.url))
  for (const url of own) {
    const response = await context.request.get(url)
    expect(response.status(), `${url} on ${page.url()}`).toBeLessThan(400)
  }
  return own
}

describe("a developer's journey from a blocked install to an approved exception", () => {
  let requestPath = ''

  it('npm prints the block with the link to the form', () => {
    expect(blockOutput).toContain('no-vulnerable')
    expect(blockOutput).toMatch(LINK)
  })

  it('lands on their home: the firewall with its client configuration, and the block with its link', async () => {
    const { context, page } = await signIn(world, devToken)
    expect(new URL(page.url()).pathname).toBe(`/namespaces/${NS}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your access')
    expect(await page.getByTestId('usable-firewall').count()).toBe(1)
    expect(await page.getByTestId('client-url').textContent()).toBe(registryUrl)
    const npmrc = await page.getByTestId('client-snippet').first().textContent()
    expect(npmrc).toContain(`registry=${registryUrl}`)
    expect(npmrc).toContain('${FIREWALL_TOKEN}')
    const blocks = page.locator('#my-blocks')
    expect(await blocks.textContent()).toContain('fw-vuln')
    expect(await blocks.textContent()).toContain('known high or critical vulnerabilities')
    const links = await expectEveryLinkOpens(page, context)
    expect(links.some((l) => l.includes('/exception-requests/new?request=req-'))).toBe(true)

    await blocks.getByRole('link', { name: 'Request an exception' }).first().click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Request an exception')
    expect(await page.getByLabel('Package').first().inputValue()).toBe('fw-vuln')
    expect(await page.getByLabel('Name on the firewall').inputValue()).toBe('ex-fw-vuln-1.0.0')
    await expectEveryLinkOpens(page, context)
    await page.getByLabel('Justification').fill('Our build pins 1.0.0 until the upgrade next sprint')
    await page.getByRole('button', { name: 'Request exception' }).click()
    await page.waitForURL(/\/exception-requests\/exr-/)
    requestPath = new URL(page.url()).pathname
    expect(await page.getByTestId('request-status').textContent()).toContain('pending')
    expect(await page.getByTestId('request-words').textContent()).toContain('Waiting for a reviewer')
    expect(await page.getByTestId('proposal').textContent()).toContain('no-vulnerable')
    expect(await page.content()).not.toMatch(/mayDecide|exceptionIdFree|&amp;&amp;|"selector"/)
    expect(await page.locator('#facts').count()).toBe(0)
    await expectEveryLinkOpens(page, context)

    // The pages the navigation and the request lead to, each with every link open.
    for (const path of [
      `/namespaces/${NS}/firewalls`,
      `/namespaces/${NS}/firewalls/web`,
      `/namespaces/${NS}/exception-requests?status=all`,
    ]) {
      await page.goto(path)
      await expectEveryLinkOpens(page, context)
    }
    await page.goto(`/namespaces/${NS}/mine`)
    expect(await page.locator('#my-requests').textContent()).toContain('Waiting for a reviewer')
    await context.close()
  })

  it('the reviewer approves from the facts panel', async () => {
    const other = await apiClient(world.server.url, dev2Token)('POST', `/v1/${NS}/config/web/exception-requests`, {
      proposedException: { id: 'ex-fw-vuln-all', rule: 'no-vulnerable', selector: { packageName: 'fw-vuln' } },
      justification: 'every version, please',
    })
    expect(other.status).toBe(201)
    const { context, page } = await signIn(world, reviewerToken)
    await page.goto(requestPath)
    const panel = page.locator('#facts')
    expect(await panel.getByRole('heading', { level: 2 }).textContent()).toBe('Facts about fw-vuln')
    // Newest first, each with its publish date and age.
    expect(await panel.getByTestId('fact-version').allTextContents()).toEqual(['1.1.0', '1.0.0'])
    const text = (await panel.textContent()) ?? ''
    expect(text).toContain('MIT')
    expect(text).toContain('Apache-2.0')
    expect(text).toContain('runs postinstall')
    expect(text).toContain('GHSA-fwvu-lnxx-0001')
    expect(text).toMatch(/less than a minute|minute/)
    expect(words(await panel.getByTestId('fact-blocks').textContent())).toBe('Blocked 1 time in the last 30 days.')
    expect(await panel.getByTestId('fact-blocked-user').allTextContents()).toEqual(['dev'])
    expect(await panel.getByTestId('fact-other-request').allTextContents()).toEqual([other.body.id])
    await page.getByRole('button', { name: 'Approve and add exception' }).click()
    expect(await page.getByTestId('request-status').textContent()).toContain('approved')
    await context.close()
  })

  it('the facts panel says when the upstream could not be reached, and still shows what the firewall knows', async () => {
    const closed = await freePort()
    const put = await world.api('PUT', `/v1/${NS}/config/offline`, {
      ecosystem: 'npm',
      upstreams: [{ id: 'gone', endpoint: `http://127.0.0.1:${closed}/` }],
      rules: [{ id: 'r', executionPhase: 'download', selector: { function: { name: 'malware' } }, description: 'm' }],
      permissions: { dev2: ['fw:access'], reviewer: ['fw:read', 'fw:update:exception'] },
    })
    expect(put.status).toBe(201)
    const asked = await apiClient(world.server.url, dev2Token)('POST', `/v1/${NS}/config/offline/exception-requests`, {
      proposedException: { id: 'ex-left-pad', rule: 'r', selector: { packageName: 'left-pad', version: '1.3.0' } },
      justification: 'needed',
    })
    expect(asked.status).toBe(201)
    const { context, page } = await signIn(world, reviewerToken)
    const response = await page.goto(`/namespaces/${NS}/firewalls/offline/exception-requests/${asked.body.id}`)
    expect(response!.status()).toBe(200)
    expect(await page.getByTestId('facts-unreachable').textContent()).toContain('Could not reach the upstream')
    expect(await page.getByTestId('fact-blocks').textContent()).toContain('Not blocked in the last 30 days')
    expect(await page.getByRole('button', { name: 'Approve and add exception' }).count()).toBe(1)
    await context.close()
  })

  it('the developer sees it approved, and the install goes through', async () => {
    const { context, page } = await signIn(world, devToken)
    expect(await page.locator('#my-requests').textContent()).toContain('Approved by reviewer')
    await expectEveryLinkOpens(page, context)
    await page.goto(requestPath)
    expect(await page.getByTestId('request-words').textContent()).toContain('go through now')
    await expectEveryLinkOpens(page, context)
    await context.close()
    const installed = await npmClient(registryUrl, devToken).npm(['install', 'fw-vuln@1.0.0'])
    expect(installed.code, installed.output).toBe(0)
  })
})

describe('a firewall one has no access to', () => {
  it('npm hears "not found, or you have no access to it"', async () => {
    const result = await npmClient(registryUrl, strangerToken).npm(['install', 'fw-vuln@1.1.0'])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('firewall "web" was not found, or you have no access to it')
  })

  it('the dashboard answers the same 404 for a hidden firewall as for a missing one', async () => {
    const { context, page } = await signIn(world, strangerToken)
    expect(await page.locator('#my-firewalls').textContent()).toContain('None yet')
    await expectEveryLinkOpens(page, context)
    const hidden = await page.goto(`/namespaces/${NS}/firewalls/web`)
    const hiddenText = await page.locator('main').textContent()
    const missing = await page.goto(`/namespaces/${NS}/firewalls/nope`)
    const missingText = await page.locator('main').textContent()
    expect(hidden!.status()).toBe(404)
    expect(missing!.status()).toBe(404)
    expect(hiddenText).toContain('firewall "web" was not found, or you have no access to it')
    expect(hiddenText!.replace('web', 'X')).toBe(missingText!.replace('nope', 'X'))
    await context.close()
  })
})
