import { mkdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  NS,
  eventually,
  requestException,
  seedFirewall,
  signIn,
  signInThroughForm,
  startWorld,
  type World,
} from './harness'

/** The reviewer's and operator's main flows in a real browser against the built server. */

let world: World
beforeAll(async () => {
  world = await startWorld()
  await seedFirewall(world.api, 'main')
})
afterAll(async () => world?.close())

describe('dashboard flows', () => {
  it('signs in with a token into an HttpOnly SameSite=Strict session and lists the firewalls', async () => {
    const { context, page } = await signInThroughForm(world)
    // Signing in lands on the namespace home, the owners' overview; the firewalls are one click away.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview')
    await page.getByRole('navigation').getByRole('link', { name: 'Firewalls', exact: true }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Firewalls')
    expect(await page.getByRole('link', { name: /Firewall main/ }).isVisible()).toBe(true)
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'pf_dashboard')
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' })
    expect(cookie.value).not.toContain('fwp_')
    await context.close()
  })

  it('refuses a wrong token with a message and no session', async () => {
    const context = await world.browser.newContext({ baseURL: world.server.url })
    const page = await context.newPage()
    await page.goto('/sign-in')
    await page.getByLabel('Access token').fill('fwp_not-a-real-token-000000000000')
    await page.getByRole('button', { name: 'Sign in' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('Sign-in failed')
    await page.goto(`/namespaces/${NS}/firewalls`)
    expect(new URL(page.url()).pathname).toBe('/sign-in')
    await context.close()
  })

  it('approves a pending exception request with an edited exception and shows it on the firewall', async () => {
    const request = await requestException(world.api, 'main', 'left-pad')
    const { context, page } = await signIn(world)
    await page.getByRole('link', { name: 'Exception requests' }).first().click()
    await page.getByRole('link', { name: request.id }).click()
    expect(new URL(page.url()).pathname).toBe(`/namespaces/${NS}/firewalls/main/exception-requests/${request.id}`)
    expect(await page.getByTestId('request-status').textContent()).toContain('pending')
    // The proposal is in the fields; the reviewer narrows it.
    expect(await page.getByLabel('Package name').inputValue()).toBe('left-pad')
    await page.getByLabel('Name on the firewall').fill('ex-left-pad-reviewed')
    await page.getByLabel('Expires (UTC)').fill('2031-06-30T00:00')
    await page.getByLabel('Reason').selectOption('accepted_risk')
    await page.getByLabel('Comment for the requester').fill('Fine until mid 2031')
    await page.getByRole('button', { name: 'Approve and add exception' }).click()
    expect(await page.getByRole('status').first().textContent()).toContain('Exception ex-left-pad-reviewed was added')
    expect(await page.getByTestId('request-status').textContent()).toContain('approved')
    expect(await page.locator('figure.diagram [data-state="approved"]').getAttribute('class')).toContain('is-active')
    await page.getByRole('link', { name: 'ex-left-pad-reviewed' }).click()
    const row = page.locator('#exceptions tr', { hasText: 'ex-left-pad-reviewed' })
    expect(await row.textContent()).toContain('2031-06-30')
    expect(await row.textContent()).toContain('left-pad')
    await context.close()
  })

  it('rolls a firewall back after confirmation and shows the new version', async () => {
    await world.api('PUT', `/v1/${NS}/config/main/rules/no-scripts`, {
      executionPhase: 'download',
      selector: { function: { name: 'installScripts' } },
    })
    const before = (await world.api('GET', `/v1/${NS}/config/main`)).body
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/history`)
    expect(await page.locator('table.diff').textContent()).toContain('installScripts')
    await page.getByRole('link', { name: 'Roll back to v1' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Roll back')
    await page.getByRole('button', { name: 'Confirm rollback to v1' }).click()
    expect(await page.getByRole('status').first().textContent()).toContain(`now at version ${before.version + 1}`)
    expect(await page.getByTestId('fw-version').textContent()).toBe(String(before.version + 1))
    const after = (await world.api('GET', `/v1/${NS}/config/main`)).body
    expect(after.version).toBe(before.version + 1)
    expect(after.rules.map((r: { id: string }) => r.id)).toEqual(['min-age'])
    // Any two versions can be compared.
    await page.goto(`/namespaces/${NS}/firewalls/main/history?from=1&to=${before.version}`)
    expect(await page.getByRole('heading', { name: `Diff v1 → v${before.version}` }).isVisible()).toBe(true)
    await context.close()
  })

  it('saves screenshots of the main pages at laptop and phone widths', async () => {
    mkdirSync('test/artifacts', { recursive: true })
    const request = await requestException(world.api, 'main', 'react', 'ex-react')
    const pages = {
      firewalls: `/namespaces/${NS}/firewalls`,
      firewall: `/namespaces/${NS}/firewalls/main`,
      history: `/namespaces/${NS}/firewalls/main/history`,
      log: `/namespaces/${NS}/firewalls/main/log`,
      requests: `/namespaces/${NS}/exception-requests`,
      request: `/namespaces/${NS}/firewalls/main/exception-requests/${request.id}`,
      webhooks: `/namespaces/${NS}/webhooks`,
      teams: `/namespaces/${NS}/teams`,
      tokens: `/namespaces/${NS}/tokens`,
      'license-sets': `/namespaces/${NS}/license-sets`,
      machines: `/namespaces/${NS}/machines`,
    }
    for (const [device, viewport] of Object.entries({
      laptop: { width: 1280, height: 800 },
      phone: { width: 390, height: 844 },
    })) {
      const { context, page } = await signIn(world, undefined, viewport)
      for (const [name, path] of Object.entries(pages)) {
        const response = await page.goto(path)
        expect(response?.status(), path).toBe(200)
        // Nothing may overflow the viewport sideways except inside scroll regions.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
        expect(overflow, `${name} on ${device}`).toBeLessThanOrEqual(1)
        await page.screenshot({ path: `test/artifacts/dashboard-${name}-${device}.png`, fullPage: true })
      }
      await context.close()
    }
    // 22 full-page screenshots: about 45 s alone, past a minute when other suites share the machine.
  }, 180_000)

  it('signs out: the session ends and pages redirect to the sign-in form', async () => {
    const { context, page } = await signIn(world)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL('**/sign-in**')
    expect(await page.getByRole('status').textContent()).toContain('signed out')
    await page.goto(`/namespaces/${NS}/firewalls/main`)
    expect(new URL(page.url()).pathname).toBe('/sign-in')
    await context.close()
  })

  it('runs under the CSP, draws diagrams styled from the stylesheet, and would report a violation', async () => {
    const { context, page } = await signIn(world)
    const response = await page.goto(`/namespaces/${NS}/machines/webhook-delivery`)
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'")
    // Unstyled SVG boxes would be black: the diagram's rules now come from /assets/dashboard.css.
    const fill = await page
      .locator('svg.machine-svg g.state:not(.compound):not(.transient) > rect.box')
      .first()
      .evaluate((el) => getComputedStyle(el).fill)
    expect(fill).toBe('rgb(255, 255, 255)')
    // A deliberate inline style: refused by the browser and seen by the watcher (then forgotten).
    const before = world.cspViolations.length
    await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<p style="color: red">probe</p>'))
    await eventually(async () => world.cspViolations.length > before, 5_000, 'the probe to be reported')
    expect(await page.locator('p', { hasText: 'probe' }).evaluate((el) => getComputedStyle(el).color)).not.toBe(
      'rgb(255, 0, 0)',
    )
    world.cspViolations.splice(before)
    await context.close()
  })

  it('draws the webhook-delivery machine with a label for every route, loops included, no two labels overlapping', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/machines/webhook-delivery`)
    const drawn = await page
      .locator('svg.machine-svg')
      .first()
      .evaluate((svg) => ({
        edges: [...svg.querySelectorAll('path.edge[data-edge]')].map((el) => el.getAttribute('data-edge')),
        labels: [...svg.querySelectorAll('g.label')].map((el) => {
          const box = el.getBoundingClientRect()
          return { text: el.textContent, x: box.x, y: box.y, w: box.width, h: box.height }
        }),
      }))
    expect(drawn.edges).toContain('active->active')
    expect(drawn.edges).toContain('delivering->delivering')
    expect(drawn.labels).toHaveLength(drawn.edges.length)
    const overlapping = drawn.labels.flatMap((a, i) =>
      drawn.labels
        .slice(i + 1)
        .filter((b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h)
        .map((b) => `${a.text} / ${b.text}`),
    )
    expect(overlapping).toEqual([])
    await context.close()
  })
})

describe('content security policy', () => {
  it('was never violated by a page of this suite', () => {
    expect(world.cspViolations).toEqual([])
  })
})
