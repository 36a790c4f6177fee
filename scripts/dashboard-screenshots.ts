/**
 * `npm run screenshots`: the dashboard's management pages in headless Chromium, saved to
 * docs/screenshots/*.png (referenced from the README). Starts the built server on a fresh data
 * directory with the dashboard tests' harness, seeds a firewall, a request and a webhook through
 * the public API, and drives the forms as a user would (SERVER_ENTRY names another build). A
 * Verdaccio upstream and real npm give the developer's home a block and the approve page its facts.
 */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Page } from 'playwright-core'
import { createUser } from '../test/support/admin'
import { apiClient, freePort } from '../test/support/server'
import { startVerdaccio } from '../test/support/verdaccio'
import { npmClient, publishFixtures } from '../test/registry/npm-cli'
import { startPypiUpstream } from '../test/support/pypi-upstream'
import { wheel } from '../test/fixtures/ecosystems/packages'
import { pip } from '../test/ecosystems/pip'
import {
  NS,
  TestReceiver,
  eventually,
  requestException,
  seedFirewall,
  signIn,
  startWorld,
} from '../test/dashboard/harness'
import { startTestProvider, TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../test/support/oidc-provider'

const OUT = 'docs/screenshots'

async function shot(page: Page, name: string, path?: string, fullPage = false) {
  if (path) await page.goto(path)
  await page.screenshot({ path: `${OUT}/${name}.png`, fullPage })
  console.log(`${OUT}/${name}.png`)
}

async function main() {
  mkdirSync(OUT, { recursive: true })
  const receiver = await new TestReceiver().start()
  receiver.status = 200
  const registry = await startVerdaccio()
  await publishFixtures(registry.url, registry.token, [
    { name: 'fw-vuln', version: '1.0.0', license: 'MIT', scripts: { postinstall: 'node -e "process.exit(0)"' } },
    { name: 'fw-vuln', version: '1.1.0', license: 'Apache-2.0' },
  ])
  const upstream = await startPypiUpstream()
  // The fixture advisories (the facts panel's) in a directory the exposure shot adds a record to.
  const advisoryDir = mkdtempSync(join(tmpdir(), 'pf-shots-advisories-'))
  cpSync(resolve('test/fixtures/advisories'), advisoryDir, { recursive: true })
  // A real OpenID provider on loopback, so the sign-in page shows its button and users come from it.
  const port = await freePort()
  const idp = await startTestProvider([`http://127.0.0.1:${port}/auth/callback`])
  const world = await startWorld(
    {
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
      ADVISORY_FEED_URL: 'off',
      ADVISORY_DIR: advisoryDir,
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: TEST_CLIENT_ID,
      OIDC_CLIENT_SECRET: TEST_CLIENT_SECRET,
    },
    { port },
  )
  try {
    const api = world.api
    await seedFirewall(api, 'web', { everybody: ['fw:access'], 'team-reviewers': ['fw:read', 'fw:update:exception'] })
    await api('PUT', `/v1/${NS}/config/web/upstreams/npmjs/credentials`, { token: 'never-shown' })
    await api('PUT', `/v1/${NS}/config/web/rules/no-scripts`, {
      executionPhase: 'download',
      selector: { function: { name: 'installScripts' } },
      description: 'No install scripts',
    })
    await api('PUT', `/v1/${NS}/config/web/exceptions/ex-esbuild`, {
      rule: 'no-scripts',
      selector: { packageName: 'esbuild' },
      reason: 'accepted_risk',
      expires: '2031-01-01T00:00:00Z',
    })
    const request = await requestException(api, 'web', 'left-pad', 'ex-left-pad')
    const webhook = (
      await api('POST', `/v1/${NS}/webhooks`, {
        name: 'Security sink',
        url: receiver.url,
        eventTypes: ['firewall.*', 'exception-request.*'],
      })
    ).body

    const { context, page } = await signIn(world, undefined, { width: 1280, height: 900 })
    await shot(page, 'firewall', `/namespaces/${NS}/firewalls/web`)
    await shot(page, 'new-firewall', `/namespaces/${NS}/firewalls/new`)

    await page.goto(`/namespaces/${NS}/firewalls/web/rules/new`)
    await page.getByLabel('Rule id').fill('risky-new')
    await page.getByLabel('Description').fill('New packages from unknown scopes wait a month')
    await page.locator('[name="s.name"]').selectOption('all')
    await page.locator('[name="s.0.name"]').selectOption('packageName')
    await page.locator('[name="s.0.patterns"]').fill('@unknown/*\nevil-*')
    await page.locator('#node-f-s').getByRole('button', { name: 'Add condition' }).last().click()
    await page.locator('[name="s.1.name"]').selectOption('not')
    await page.locator('[name="s.1.0.name"]').selectOption('minimumAge')
    await page.locator('[name="s.1.0.duration"]').fill('30d')
    await page.locator('#rule').scrollIntoViewIfNeeded()
    await shot(page, 'rule-editor')

    await page.goto(`/namespaces/${NS}/firewalls/web/upstreams/npmjs/edit`)
    await page.getByLabel('Endpoint').fill('https://npm.internal.example.com/')
    await page.getByRole('button', { name: 'Save upstream' }).click()
    await shot(page, 'upstream-refused')

    await shot(page, 'permissions', `/namespaces/${NS}/firewalls/web/permissions`)
    await shot(page, 'history', `/namespaces/${NS}/firewalls/web/history`)
    await shot(page, 'approve', `/namespaces/${NS}/firewalls/web/exception-requests/${request.id}#approve`)

    // A developer blocked by a real npm install through a firewall on Verdaccio: their home, then
    // the reviewer's approve page with the facts panel.
    const devToken = await createUser(world.server, 'dev')
    await api('PUT', `/v1/${NS}/config/apps`, {
      ecosystem: 'npm',
      name: 'Web apps',
      description: 'What the web teams install from',
      upstreams: [{ id: 'verdaccio', endpoint: registry.url }],
      rules: [
        {
          id: 'no-vulnerable',
          executionPhase: 'download',
          selector: { function: { name: 'vulnerability', minSeverity: 'high' } },
          description: 'known high or critical vulnerabilities',
        },
      ],
      permissions: { dev: ['fw:access'] },
    })
    await npmClient(`${world.server.url}/registry/${NS}/apps/`, devToken).npm(['install', 'fw-vuln@1.0.0'])
    const asked = await apiClient(world.server.url, devToken)('POST', `/v1/${NS}/config/apps/exception-requests`, {
      proposedException: {
        id: 'ex-fw-vuln-1.0.0',
        rule: 'no-vulnerable',
        selector: { packageName: 'fw-vuln', version: '1.0.0' },
      },
      justification: 'Our build pins 1.0.0 until the upgrade next sprint',
    })
    await shot(page, 'approve-facts', `/namespaces/${NS}/firewalls/apps/exception-requests/${asked.body.id}#facts`)
    const developer = await signIn(world, devToken, { width: 1280, height: 900 })
    await shot(developer.page, 'developer-home', `/namespaces/${NS}`)
    await developer.context.close()
    await shot(page, 'webhook-edit', `/namespaces/${NS}/webhooks/${webhook.id}/edit`)
    await shot(page, 'event-catalog', `/namespaces/${NS}/event-types`)

    // A request made now reaches the webhook: its delivery's page (attempts, Resend), then the recover form's answer.
    await requestException(api, 'web', 'is-odd', 'ex-is-odd')
    const deliveries = `/v1/${NS}/webhooks/${webhook.id}/deliveries`
    const delivery = await eventually(async () => (await api('GET', deliveries)).body[0], 20_000, 'a delivery')
    await shot(page, 'webhook-delivery', `/namespaces/${NS}/webhooks/${webhook.id}/deliveries/${delivery.id}`)
    await page.goto(`/namespaces/${NS}/webhooks/${webhook.id}`)
    await page.locator('#recover').getByRole('button', { name: 'Recover failed deliveries' }).click()
    await page.locator('#recover').scrollIntoViewIfNeeded()
    await shot(page, 'webhook-recover')

    // People: the sign-in page with the provider first, the users page, a new personal token.
    await api('POST', `/v1/${NS}/teams`, { id: 'developers', name: 'Developers', permissions: [] })
    await createUser(world.server, 'carl', NS)
    idp.accounts.set('alice', { groups: ['developers'] })
    idp.nextUser = 'alice'
    const visitor = await world.browser.newContext({
      baseURL: world.server.url,
      viewport: { width: 1280, height: 700 },
    })
    const signInPage = await visitor.newPage()
    await shot(signInPage, 'sign-in', '/sign-in')
    await signInPage.getByRole('link', { name: /^Sign in with / }).click()
    await signInPage.waitForURL(`**/namespaces/${NS}`)
    await signInPage.goto(`/namespaces/${NS}/tokens`)
    await signInPage.locator('#personal').getByLabel('Name').fill('laptop')
    await signInPage.getByRole('button', { name: 'Create personal token' }).click()
    await shot(signInPage, 'tokens')
    await visitor.close()
    await shot(page, 'users', `/namespaces/${NS}/users`)
    // The owner overview, a firewall's inventory and its exposures, from real pip downloads.
    await servePypi(world, upstream, advisoryDir)
    await shot(page, 'overview', `/namespaces/${NS}`, true)
    await shot(page, 'inventory', `/namespaces/${NS}/firewalls/py/inventory`, true)
    await shot(page, 'exposures', `/namespaces/${NS}/exposures`)
    await context.close()
  } finally {
    await world.close()
    await receiver.close()
    await registry.stop()
    await idp.close()
    await upstream.close()
  }
}

/**
 * A PyPI firewall with a block rule on a loopback upstream: pip downloads (some blocked) from two
 * developers, a request about a block, then a `MAL-` record for a served version in ADVISORY_DIR.
 */
async function servePypi(
  world: Awaited<ReturnType<typeof startWorld>>,
  upstream: Awaited<ReturnType<typeof startPypiUpstream>>,
  advisoryDir: string,
) {
  const served = [
    ['requests-lite', '2.31.0'],
    ['colorama-mini', '0.4.6'],
    ['yaml-tools', '6.0.1'],
    ['fw-evil', '1.0'],
    ['fw-evil-helper', '0.3'],
  ] as const
  for (const [name, version] of served) {
    const { filename, bytes } = wheel(name, version)
    upstream.add(name, filename, bytes)
  }
  const devs = [await createUser(world.server, 'dana'), await createUser(world.server, 'ci-runner')]
  await world.api('PUT', `/v1/${NS}/config/py`, {
    ecosystem: 'pypi',
    name: 'Python builds',
    upstreams: [{ id: 'pypi-local', endpoint: upstream.url }],
    rules: [
      {
        id: 'dl-block',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['fw-evil*'] } },
        description: 'fw-evil* packages are banned',
      },
    ],
    permissions: { dana: ['fw:access'], 'ci-runner': ['fw:access'] },
  })
  const index = `${world.server.url}/registry/${NS}/py/`
  for (const token of devs)
    for (const [name, version] of served) await pip(index, token, ['download', `${name}==${version}`])
  await pip(index, devs[0], ['download', 'fw-evil==1.0'])
  await eventually(
    async () => ((await world.api('GET', `/v1/${NS}/config/py/inventory`)).body as unknown[]).length >= 3,
    20_000,
    'the served versions in the inventory',
  )
  writeFileSync(
    join(advisoryDir, 'MAL-2026-9001.json'),
    JSON.stringify({
      id: 'MAL-2026-9001',
      modified: '2026-11-26T00:00:00Z',
      summary: 'Malicious code in yaml-tools (PyPI)',
      affected: [{ package: { ecosystem: 'PyPI', name: 'yaml-tools' }, versions: ['6.0.1'] }],
    }),
  )
  await eventually(
    async () => ((await world.api('GET', `/v1/${NS}/exposures`)).body as unknown[]).length >= 1,
    30_000,
    'the exposure',
  )
}

await main()
