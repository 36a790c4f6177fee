import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { freePort } from '../support/server'
import { startVerdaccio, type Verdaccio } from '../support/verdaccio'
import { publishFixtures } from '../registry/npm-cli'
import { runClient } from '../clients/run'
import { startTestProvider, TEST_CLIENT_ID, TEST_CLIENT_SECRET, type TestProvider } from '../support/oidc-provider'
import { NS, startWorld, type World } from './harness'

/**
 * A developer signed in through the provider creates a personal token on the Tokens page, finds
 * it next to the client snippet of the firewall they may use, and installs with real npm.
 */

let world: World
let idp: TestProvider
let registry: Verdaccio

const firewall = (id: string, permissions: Record<string, string[]>) => ({
  ecosystem: 'npm',
  name: `Firewall ${id}`,
  upstreams: [{ id: 'verdaccio', endpoint: registry.url, credentials: { token: registry.token } }],
  rules: [],
  exceptions: [],
  permissions,
})

beforeAll(async () => {
  registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, [{ name: 'fw-ok', version: '1.0.0', license: 'MIT' }])
  const port = await freePort()
  idp = await startTestProvider([`http://127.0.0.1:${port}/auth/callback`])
  world = await startWorld(
    {
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: TEST_CLIENT_ID,
      OIDC_CLIENT_SECRET: TEST_CLIENT_SECRET,
      UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8',
    },
    { port },
  )
  expect((await world.api('POST', `/v1/${NS}/teams`, { id: 'developers', name: 'Developers' })).status).toBe(201)
  expect((await world.api('PUT', `/v1/${NS}/config/web`, firewall('web', { developers: ['fw:access'] }))).status).toBe(
    201,
  )
  expect((await world.api('PUT', `/v1/${NS}/config/closed`, firewall('closed', {}))).status).toBe(201)
}, 180_000)
afterAll(async () => {
  await world?.close()
  await idp?.close()
  await registry?.stop()
})

async function signInAs(user: string, groups: string[]): Promise<Page> {
  idp.accounts.set(user, { groups })
  idp.nextUser = user
  const context = await world.browser.newContext({ baseURL: world.server.url })
  const page = await context.newPage()
  page.on('dialog', (dialog) => void dialog.accept())
  await page.goto('/sign-in')
  await page.getByRole('link', { name: /^Sign in with / }).click()
  await page.waitForURL(`**/namespaces/${NS}`)
  return page
}

async function npmInstall(npmrc: string, token: string) {
  const root = mkdtempSync(join(tmpdir(), 'pf-token-npm-'))
  const dir = join(root, 'project')
  const home = join(root, 'home')
  mkdirSync(dir)
  mkdirSync(home)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
  writeFileSync(join(dir, '.npmrc'), npmrc + '\n')
  const result = await runClient(
    'npm',
    ['install', 'fw-ok', '--no-audit', '--no-fund', `--cache=${join(root, 'cache')}`, '--fetch-retries=0'],
    { cwd: dir, bareEnv: true, env: { HOME: home, FIREWALL_TOKEN: token, NO_UPDATE_NOTIFIER: '1' } },
  )
  return { ...result, dir }
}

describe('personal tokens from the dashboard', () => {
  it('shows a new token once, next to the snippet of each firewall the user may use, and npm installs with it', async () => {
    const page = await signInAs('dana', ['developers'])
    await page.goto(`/namespaces/${NS}/tokens`)
    await page.locator('#personal').getByLabel('Name').fill('laptop')
    await page.getByRole('button', { name: 'Create personal token' }).click()
    const token = (await page.getByTestId('new-token').textContent())!.trim()
    expect(token).toMatch(/^fwp_/)
    expect(await page.getByTestId('token-export').textContent()).toBe(`export FIREWALL_TOKEN=${token}`)
    // Only the firewall dana's team may use is offered.
    const offered = await page.getByTestId('token-firewall').evaluateAll((els) => els.map((el) => el.dataset.firewall))
    expect(offered).toEqual(['web'])
    const npmrc = (await page.locator('[data-firewall="web"] [data-testid="client-snippet"]').first().textContent())!
    expect(npmrc).toContain(`registry=${world.server.url}/registry/${NS}/web/`)

    const installed = await npmInstall(npmrc, token)
    expect(installed.code, installed.output).toBe(0)
    const pkg = JSON.parse(readFileSync(join(installed.dir, 'node_modules', 'fw-ok', 'package.json'), 'utf8'))
    expect(pkg.version).toBe('1.0.0')

    // Shown once: the page read again lists the token by name and prefix only.
    await page.goto(`/namespaces/${NS}/tokens`)
    expect(await page.content()).not.toContain(token)
    expect(await page.locator('#personal').innerText()).toContain('laptop')

    // Revoked from the page: npm is refused at once.
    await page.locator('#personal tr', { hasText: 'laptop' }).getByRole('button', { name: 'Revoke' }).click()
    await page.waitForURL(`**/namespaces/${NS}/tokens`)
    expect(await page.locator('#personal').innerText()).not.toContain('laptop')
    const refused = await npmInstall(npmrc, token)
    expect(refused.code).not.toBe(0)
    expect(refused.output).toMatch(/E401|401/)
    await page.context().close()
  })

  it('tells a user with no firewall to use where to ask', async () => {
    const page = await signInAs('erin', [])
    await page.goto(`/namespaces/${NS}/tokens`)
    await page.locator('#personal').getByLabel('Name').fill('ci')
    await page.getByRole('button', { name: 'Create personal token' }).click()
    expect(await page.getByTestId('new-token').textContent()).toMatch(/fwp_/)
    expect(await page.getByTestId('token-firewall').count()).toBe(0)
    expect(await page.locator('main').innerText()).toContain('No firewall grants you fw:access yet')
    await page.context().close()
  })
})
