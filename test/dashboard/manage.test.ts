import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createUser } from '../support/admin'
import { NS, seedFirewall, signIn, startWorld, type World } from './harness'

/**
 * The firewall owner manages from the dashboard: create, rules with the selector builder,
 * upstreams without revealing credentials, exceptions, permissions, clone and delete. Every
 * save is checked through the public API; every refusal shows next to its field.
 */

let world: World
let carolToken: string

beforeAll(async () => {
  world = await startWorld({ UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' })
  carolToken = await createUser(world.server, 'carol', NS)
  // Principals are picked from known users: alice is one.
  await createUser(world.server, 'alice', NS)
  await seedFirewall(world.api, 'main', { everybody: ['fw:access'], carol: ['fw:read', 'fw:update:config'] })
})
afterAll(async () => world?.close())

const firewall = async (id: string) => world.api('GET', `/v1/${NS}/config/${id}`)
const fieldError = (page: Page, name: string) => page.locator(`#f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}-err`)

describe('dashboard: creating firewalls', () => {
  it('creates a firewall with its first upstream and refuses a taken id and a bad id on the form', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls`)
    await page.getByRole('link', { name: 'New firewall' }).click()
    await page.getByLabel('Firewall id').fill('py')
    await page.getByLabel('Display name').fill('Python packages')
    await page.getByLabel('Ecosystem').selectOption('pypi')
    await page.getByLabel('Upstream id').fill('pypi-org')
    await page.getByLabel('Upstream endpoint').fill('https://pypi.org/simple/')
    await page.getByRole('button', { name: 'Create firewall' }).click()
    await page.waitForURL(`**/namespaces/${NS}/firewalls/py`)
    expect(await page.getByRole('status').first().textContent()).toContain('Firewall py created')
    // The page shows the ecosystem's client snippets with this firewall's URL and a token placeholder.
    const pip = await page.getByTestId('client-snippet').first().textContent()
    expect(pip).toMatch(
      new RegExp(`pip install --index-url "http://__token__:\\$FIREWALL_TOKEN@[^/]+/registry/${NS}/py/simple/"`),
    )
    const created = (await firewall('py')).body
    expect(created).toMatchObject({
      id: 'py',
      name: 'Python packages',
      ecosystem: 'pypi',
      version: 1,
      upstreams: [{ id: 'pypi-org', endpoint: 'https://pypi.org/simple/' }],
    })

    await page.goto(`/namespaces/${NS}/firewalls/new`)
    await page.getByLabel('Firewall id').fill('main')
    await page.getByRole('button', { name: 'Create firewall' }).click()
    expect(await page.getByTestId('form-errors').textContent()).toContain('already exists')
    expect((await firewall('main')).body.name).toBe('Firewall main')

    await page.getByLabel('Firewall id').fill('bad id!')
    const response = page.waitForResponse((r) => r.request().method() === 'POST')
    await page.getByRole('button', { name: 'Create firewall' }).click()
    expect((await response).status()).toBe(400)
    expect(await fieldError(page, 'id').isVisible()).toBe(true)
    expect(await page.getByLabel('Firewall id').getAttribute('aria-invalid')).toBe('true')
    await context.close()
  })
})

describe('dashboard: rules and the selector builder', () => {
  it('builds a nested selector, shows its JSON live, and saves exactly that rule', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main`)
    await page.getByRole('link', { name: 'Add rule' }).click()
    // Loaded, stylesheet included: before it applies, every field counts as visible (failed so under load).
    await page.waitForURL(`**/firewalls/main/rules/new`)
    await page.getByLabel('Rule id').fill('risky-new')
    await page.getByLabel('Description').fill('New evil-ish packages wait')
    // Only the chosen function's fields show (CSS :has, no script needed).
    expect(await page.locator('[name="s.patterns"]').isVisible()).toBe(true)
    expect(await page.locator('[name="s.duration"]').isVisible()).toBe(false)
    await page.locator('[name="s.name"]').selectOption('all')
    expect(await page.locator('[name="s.patterns"]').isVisible()).toBe(false)
    await page.locator('[name="s.0.name"]').selectOption('packageName')
    await page.locator('[name="s.0.patterns"]').fill('evil-*\n@shady/*')
    // A second condition: the draft goes back to the server and returns with one more node.
    await page.locator('#node-f-s').getByRole('button', { name: 'Add condition' }).last().click()
    // The live JSON is the deferred script's: it listens only once the new page has loaded.
    await page.waitForLoadState()
    await page.locator('[name="s.1.name"]').selectOption('not')
    await page.locator('[name="s.1.0.name"]').selectOption('minimumAge')
    await page.locator('[name="s.1.0.duration"]').fill('30d')
    const expected = {
      function: {
        name: 'all',
        selectors: [
          { function: { name: 'packageName', patterns: ['evil-*', '@shady/*'] } },
          { function: { name: 'not', selector: { function: { name: 'minimumAge', duration: '30d' } } } },
        ],
      },
    }
    expect(JSON.parse((await page.getByTestId('selector-json').textContent())!)).toEqual(expected)
    // The draft round trip kept what was typed before it.
    expect(await page.getByLabel('Rule id').inputValue()).toBe('risky-new')
    await page.getByRole('button', { name: 'Save rule' }).click()
    await page.waitForURL(`**/namespaces/${NS}/firewalls/main#rules`)
    const rule = (await firewall('main')).body.rules.find((r: { id: string }) => r.id === 'risky-new')
    expect(rule).toEqual({
      id: 'risky-new',
      executionPhase: 'download',
      description: 'New evil-ish packages wait',
      ruleEffect: { block: true, log: true },
      selector: expected,
    })
    await context.close()
  })

  it('offers every selector of the contract, shows each one’s fields, and saves a vulnerability rule', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/rules/new`)
    const names = await page
      .locator('[name="s.name"] option')
      .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))
    expect(names).toEqual([
      'packageName',
      'versionRange',
      'minimumAge',
      'license',
      'deprecated',
      'installScripts',
      'vulnerability',
      'malware',
      'all',
      'any',
      'not',
    ])
    const fieldsOf: Record<string, string[]> = {
      versionRange: ['package', 'range'],
      license: ['licenseSet', 'mode'],
      vulnerability: ['minSeverity', 'minCvss'],
      deprecated: [],
    }
    for (const [name, args] of Object.entries(fieldsOf)) {
      await page.locator('[name="s.name"]').selectOption(name)
      const visible = await page
        .locator('#node-f-s > .sel-args > .arg')
        .evaluateAll((els) =>
          els.filter((el) => (el as HTMLElement).offsetParent !== null).map((el) => el.className.replace(/.*arg-/, '')),
        )
      expect(visible, name).toEqual(args)
    }
    await page.locator('[name="s.name"]').selectOption('vulnerability')
    await page.locator('[name="s.minSeverity"]').selectOption('high')
    await page.getByLabel('Rule id').fill('vulns')
    expect(JSON.parse((await page.getByTestId('selector-json').textContent())!)).toEqual({
      function: { name: 'vulnerability', minSeverity: 'high' },
    })
    await page.getByRole('button', { name: 'Save rule' }).click()
    await page.waitForURL(`**/firewalls/main#rules`)
    expect((await firewall('main')).body.rules.find((r: { id: string }) => r.id === 'vulns').selector).toEqual({
      function: { name: 'vulnerability', minSeverity: 'high' },
    })
    await context.close()
  })

  it('shows a refused rule’s errors next to the fields and saves nothing', async () => {
    const before = (await firewall('main')).body
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/rules/min-age/edit`)
    expect(await page.locator('[name="s.duration"]').inputValue()).toBe('72h')
    await page.locator('[name="s.duration"]').fill('soon')
    const response = page.waitForResponse((r) => r.request().method() === 'POST')
    await page.getByRole('button', { name: 'Save rule' }).click()
    expect((await response).status()).toBe(400)
    expect(await fieldError(page, 's.duration').textContent()).toContain('duration')
    expect(await page.locator('[name="s.duration"]').inputValue()).toBe('soon')
    // An npm range on a pypi-style rule is judged by the domain against the ecosystem: also next to its field.
    await page.locator('[name="s.name"]').selectOption('versionRange')
    await page.locator('[name="s.package"]').fill('lodash')
    await page.locator('[name="s.range"]').fill('not a range ((')
    await page.getByRole('button', { name: 'Save rule' }).click()
    // The ecosystem check judges the whole condition: its message sits under the condition's function.
    expect(await fieldError(page, 's.name').textContent()).toContain('versionRange not a range ((')
    expect((await firewall('main')).body.version).toBe(before.version)
    await context.close()
  })

  it('answers a form drawn from an older version with 412 on the form, input kept', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/rules/new`)
    await page.getByLabel('Rule id').fill('late')
    await page.locator('[name="s.patterns"]').fill('late-*')
    await world.api('PUT', `/v1/${NS}/config/main/rules/meanwhile`, {
      executionPhase: 'download',
      selector: { function: { name: 'deprecated' } },
    })
    const response = page.waitForResponse((r) => r.request().method() === 'POST')
    await page.getByRole('button', { name: 'Save rule' }).click()
    expect((await response).status()).toBe(412)
    expect(await page.getByTestId('form-errors').textContent()).toContain('changed since the form was opened')
    expect(await page.locator('[name="s.patterns"]').inputValue()).toBe('late-*')
    await page.getByRole('button', { name: 'Save rule' }).click()
    await page.waitForURL(`**/firewalls/main#rules`)
    const ids = (await firewall('main')).body.rules.map((r: { id: string }) => r.id)
    expect(ids).toEqual(expect.arrayContaining(['meanwhile', 'late']))
    await context.close()
  })

  it('deletes a rule from its page', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/rules/late/edit`)
    await page.getByRole('button', { name: 'Delete rule' }).click()
    await page.waitForURL(`**/firewalls/main#rules`)
    expect((await firewall('main')).body.rules.map((r: { id: string }) => r.id)).not.toContain('late')
    await context.close()
  })
})

describe('dashboard: upstreams keep their credentials unless replaced', () => {
  const SECRET = 'upstream-secret-token-value-123'

  it('never shows the credential, keeps it on an edit, refuses it at a new endpoint, and takes a new one', async () => {
    const put = await world.api('PUT', `/v1/${NS}/config/main/upstreams/npmjs/credentials`, { token: SECRET })
    expect(put.status).toBe(200)
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main`)
    await page.getByRole('link', { name: 'npmjs' }).click()
    expect(await page.content()).not.toContain(SECRET)
    expect(await page.getByLabel('Keep the stored credentials').isChecked()).toBe(true)
    await page.getByLabel('Cache tarballs and metadata').check()
    await page.getByRole('button', { name: 'Save upstream' }).click()
    await page.waitForURL(`**/firewalls/main#upstreams`)
    let stored = (await firewall('main')).body.upstreams[0]
    expect(stored).toMatchObject({ id: 'npmjs', cached: true, credentials: { token: '[REDACTED]' } })

    // The kept secret belongs to its endpoint: moving it is refused next to the credentials.
    await page.goto(`/namespaces/${NS}/firewalls/main/upstreams/npmjs/edit`)
    await page.getByLabel('Endpoint').fill('https://npm.internal.example.com/')
    const response = page.waitForResponse((r) => r.request().method() === 'POST')
    await page.getByRole('button', { name: 'Save upstream' }).click()
    expect((await response).status()).toBe(400)
    expect(await page.locator('#f-credentials').textContent()).toContain('give the credentials again')
    expect(await page.getByLabel('Endpoint').inputValue()).toBe('https://npm.internal.example.com/')
    expect((await firewall('main')).body.upstreams[0].endpoint).toBe('https://registry.npmjs.org')

    await page.getByLabel('A user name and password').check()
    await page.getByLabel('User name', { exact: true }).fill('ci')
    await page.getByLabel('Password', { exact: true }).fill('new-password-456')
    await page.getByRole('button', { name: 'Save upstream' }).click()
    await page.waitForURL(`**/firewalls/main#upstreams`)
    stored = (await firewall('main')).body.upstreams[0]
    expect(stored).toMatchObject({
      endpoint: 'https://npm.internal.example.com/',
      credentials: { username: '[REDACTED]', password: '[REDACTED]' },
    })
    await context.close()
  })

  it('adds and removes an upstream, and refuses a loopback endpoint naming the setting', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/upstreams/new`)
    await page.getByLabel('Upstream id').fill('mirror')
    await page.getByLabel('Endpoint').fill('http://169.254.169.254/latest')
    await page.getByRole('button', { name: 'Save upstream' }).click()
    expect(await fieldError(page, 'endpoint').isVisible()).toBe(true)
    expect((await firewall('main')).body.upstreams.map((u: { id: string }) => u.id)).toEqual(['npmjs'])
    await page.getByLabel('Endpoint').fill('https://mirror.example.com/npm/')
    await page.getByRole('button', { name: 'Save upstream' }).click()
    await page.waitForURL(`**/firewalls/main#upstreams`)
    expect((await firewall('main')).body.upstreams.map((u: { id: string }) => u.id)).toEqual(['npmjs', 'mirror'])
    await page.goto(`/namespaces/${NS}/firewalls/main/upstreams/mirror/edit`)
    await page.getByRole('button', { name: 'Remove upstream' }).click()
    await page.waitForURL(`**/firewalls/main#upstreams`)
    expect((await firewall('main')).body.upstreams.map((u: { id: string }) => u.id)).toEqual(['npmjs'])
    await context.close()
  })
})

describe('dashboard: exceptions and permissions', () => {
  it('adds an exception with an expiry and edits it', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main`)
    await page.getByRole('link', { name: 'Add exception' }).click()
    await page.getByLabel('Name on the firewall').fill('ex-moment')
    await page.getByLabel('Rule it applies to').selectOption('min-age')
    await page.getByLabel('Package name').fill('moment')
    await page.getByLabel('Package version').fill('2.30.1')
    await page.getByLabel('Expires (UTC)').fill('2031-01-15T12:00')
    await page.getByLabel('Reason').selectOption('accepted_risk')
    await page.getByRole('button', { name: 'Save exception' }).click()
    await page.waitForURL(`**/firewalls/main#exceptions`)
    const ex = (await firewall('main')).body.exceptions.find((e: { id: string }) => e.id === 'ex-moment')
    expect(ex).toEqual({
      id: 'ex-moment',
      rule: 'min-age',
      selector: { packageName: 'moment', version: '2.30.1' },
      log: true,
      expires: '2031-01-15T12:00:00Z',
      reason: 'accepted_risk',
    })

    await page.getByRole('link', { name: 'ex-moment' }).click()
    expect(await page.getByLabel('Expires (UTC)').inputValue()).toBe('2031-01-15T12:00')
    await page.getByLabel('Package version').fill('')
    await page.getByLabel('Notes').fill('every version')
    await page.getByRole('button', { name: 'Save exception' }).click()
    await page.waitForURL(`**/firewalls/main#exceptions`)
    const edited = (await firewall('main')).body.exceptions.find((e: { id: string }) => e.id === 'ex-moment')
    expect(edited).toMatchObject({ selector: { packageName: 'moment' }, notes: 'every version' })
    expect(edited.selector.version).toBeUndefined()
    await context.close()
  })

  it('grants a permission on the grid, and refuses a grant the user does not hold, naming it', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/permissions`)
    // Picked, not typed: the known users and teams (and everybody) are the choices.
    const choices = await page
      .getByLabel('Principal')
      .locator('option')
      .evaluateAll((els) => els.map((el) => (el as HTMLOptionElement).value))
    expect(choices).toEqual(expect.arrayContaining(['alice', 'owner']))
    expect(choices).not.toContain('everybody') // it has a row already
    await page.getByLabel('Principal').selectOption('alice')
    await page.locator('[name="new.perm"][value="fw:read"]').check()
    await page.getByLabel('everybody: fw:read').check()
    await page.getByRole('button', { name: 'Save permissions' }).click()
    await page.waitForURL(`**/firewalls/main#permissions`)
    expect((await firewall('main')).body.permissions).toMatchObject({
      alice: ['fw:read'],
      everybody: ['fw:access', 'fw:read'],
    })
    await context.close()

    // carol holds fw:update:config but not fw:delete: the same refusal as the API's, on the form.
    const carol = await signIn(world, carolToken)
    await carol.page.goto(`/namespaces/${NS}/firewalls/main/permissions`)
    await carol.page.getByLabel('alice: fw:delete').check()
    const response = carol.page.waitForResponse((r) => r.request().method() === 'POST')
    await carol.page.getByRole('button', { name: 'Save permissions' }).click()
    expect((await response).status()).toBe(403)
    expect(await carol.page.getByTestId('form-errors').textContent()).toContain('fw:delete')
    expect((await firewall('main')).body.permissions.alice).toEqual(['fw:read'])
    // And carol sees no "Add rule": she lacks fw:update:rule.
    await carol.page.goto(`/namespaces/${NS}/firewalls/main`)
    expect(await carol.page.getByRole('link', { name: 'Add rule' }).count()).toBe(0)
    await carol.context.close()
  })

  it('refuses a management form post without the CSRF token', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/permissions`)
    const response = await page.request.post(`/namespaces/${NS}/firewalls/main/permissions`, {
      form: { 'new.principal': 'mallory', 'new.perm': 'fw:read' },
      maxRedirects: 0,
    })
    expect(response.status()).toBe(403)
    expect((await firewall('main')).body.permissions.mallory).toBeUndefined()
    await context.close()
  })
})

describe('dashboard: settings, clone and delete', () => {
  it('edits the settings, clones the firewall, and deletes the clone', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main`)
    await page.getByRole('link', { name: 'Settings' }).click()
    await page.getByLabel('Description').fill('Managed from the dashboard')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.waitForURL(`**/firewalls/main`)
    expect((await firewall('main')).body.description).toBe('Managed from the dashboard')

    await page.goto(`/namespaces/${NS}/firewalls/main/settings`)
    await page.getByLabel('Extends').fill('nope')
    await page.getByRole('button', { name: 'Save settings' }).click()
    expect(await fieldError(page, 'extends').textContent()).toContain('unknown firewall')

    await page.getByLabel('New firewall id').fill('main-copy')
    await page.getByRole('button', { name: 'Clone firewall' }).click()
    await page.waitForURL(`**/firewalls/main-copy`)
    const copy = (await firewall('main-copy')).body
    expect(copy).toMatchObject({ id: 'main-copy', version: 1, name: 'Firewall main (copy)' })
    expect(copy.rules).toEqual((await firewall('main')).body.rules)

    await page.goto(`/namespaces/${NS}/firewalls/main-copy/settings`)
    await page.getByRole('button', { name: 'Delete firewall' }).click()
    await page.waitForURL(`**/namespaces/${NS}/firewalls`)
    expect(await page.getByRole('status').first().textContent()).toContain('main-copy deleted')
    expect((await firewall('main-copy')).status).toBe(404)
    await context.close()
  })
})

describe('content security policy', () => {
  it('was never violated by a page of this suite', () => {
    expect(world.cspViolations).toEqual([])
  })
})
