import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { NS, seedFirewall, signIn, startWorld, type World } from './harness'

/**
 * Issue 24, dashboard items: a form that changes a firewall must say which version it was drawn
 * from (none: refused on the page; stale: the 412 message), a token form's bad expiry is a form
 * error and not a 500, and a duplicate exception request is refused with a link to the pending one.
 * After every refusal the stored state (read through the API) is what it was.
 */

let world: World
const FW = 'guarded'
const fwPath = `/namespaces/${NS}/firewalls/${FW}`
/** The firewall the exception request form asks on (its rule is never edited here). */
const ASKS = 'asks'

/** The firewall every form edits, with a rule, an exception and an upstream (again, if a test lost them). */
async function seed(): Promise<void> {
  await seedFirewall(world.api, FW)
  const current = (await world.api('GET', `/v1/${NS}/config/${FW}`)).body
  const withException = await world.api('PUT', `/v1/${NS}/config/${FW}`, {
    ...current,
    exceptions: [{ id: 'ex-1', rule: 'min-age', selector: { packageName: 'left-pad' } }],
  })
  expect(withException.status).toBe(200)
}

beforeAll(async () => {
  world = await startWorld()
  await seed()
  await seedFirewall(world.api, ASKS)
})
afterAll(async () => world?.close())

const firewall = async () => (await world.api('GET', `/v1/${NS}/config/${FW}`)).body
const history = async () => (await world.api('GET', `/v1/${NS}/config/${FW}/history`)).body

/** Every dashboard form that changes the firewall: the page that draws it, its action, its version field. */
const VERSIONED_FORMS: { name: string; page: string; action: string; field: string }[] = [
  { name: 'settings', page: `${fwPath}/settings`, action: `${fwPath}/settings`, field: 'version' },
  { name: 'delete firewall', page: `${fwPath}/settings`, action: `${fwPath}/delete`, field: 'version' },
  { name: 'permissions', page: `${fwPath}/permissions`, action: `${fwPath}/permissions`, field: 'version' },
  { name: 'rule', page: `${fwPath}/rules/min-age/edit`, action: `${fwPath}/rules`, field: 'version' },
  {
    name: 'delete rule',
    page: `${fwPath}/rules/min-age/edit`,
    action: `${fwPath}/rules/min-age/delete`,
    field: 'version',
  },
  { name: 'exception', page: `${fwPath}/exceptions/ex-1/edit`, action: `${fwPath}/exceptions`, field: 'version' },
  { name: 'remove exception', page: fwPath, action: `${fwPath}/exceptions/ex-1/delete`, field: 'version' },
  { name: 'upstream', page: `${fwPath}/upstreams/npmjs/edit`, action: `${fwPath}/upstreams`, field: 'version' },
  {
    name: 'delete upstream',
    page: `${fwPath}/upstreams/npmjs/edit`,
    action: `${fwPath}/upstreams/npmjs/delete`,
    field: 'version',
  },
  {
    name: 'rollback',
    page: `${fwPath}/versions/{previous}/rollback`,
    action: `${fwPath}/versions/{previous}/rollback`,
    field: 'expectedVersion',
  },
]

/** Submits the form posting to `action` as the browser would (its confirm accepted); answers the POST's status. */
async function submit(page: Page, action: string, change?: (form: HTMLFormElement) => void): Promise<number> {
  const form = page.locator(`form[action="${action}"]`)
  expect(await form.count(), `one form posting to ${action}`).toBe(1)
  if (change) await form.evaluate(change)
  const response = page.waitForResponse((r) => r.request().method() === 'POST')
  await form.evaluate((f: HTMLFormElement) => f.requestSubmit())
  const status = (await response).status()
  await page.waitForLoadState()
  return status
}

describe('dashboard forms that change a firewall require the version they were drawn from', () => {
  for (const form of VERSIONED_FORMS) {
    it(`${form.name}: no version is refused on the page; a stale one is the 412 message; nothing changes`, async () => {
      // Each form on its own: code that saved a version-less post must fail here, not in the next test.
      await seed()
      // `{previous}`: the version before the current one (the rollback's target).
      const previous = String((await firewall()).version - 1)
      const at = {
        page: form.page.replace('{previous}', previous),
        action: form.action.replace('{previous}', previous),
      }
      const { context, page } = await signIn(world)
      try {
        await page.goto(at.page)
        const before = { firewall: await firewall(), history: await history() }
        const field = form.field
        const missing = await submit(page, at.action, (f) => {
          f.querySelectorAll('input[name="version"], input[name="expectedVersion"]').forEach((input) => input.remove())
        })
        expect(missing, 'status without a version').toBe(400)
        expect(await page.textContent('main')).toContain('which version of the firewall it was drawn from')
        expect({ firewall: await firewall(), history: await history() }).toEqual(before)

        // Stale: the firewall changes after the form is drawn (another tab, the API).
        await page.goto(at.page)
        expect(await page.locator(`form[action="${at.action}"] input[name="${field}"]`).count()).toBe(1)
        const bumped = await world.api('PUT', `/v1/${NS}/config/${FW}`, {
          ...before.firewall,
          description: `changed meanwhile ${Date.now()}`,
        })
        expect(bumped.status).toBe(200)
        const changed = { firewall: await firewall(), history: await history() }
        expect(await submit(page, at.action), 'status with a stale version').toBe(412)
        expect(await page.textContent('main')).toMatch(
          /changed since the form was opened|does not match the current version/,
        )
        expect({ firewall: await firewall(), history: await history() }).toEqual(changed)
      } finally {
        await context.close()
      }
    })
  }
})

describe('dashboard token forms', () => {
  it('refuse an expiry that is not a date on the form (400, not 500) and create nothing', async () => {
    const { context, page } = await signIn(world)
    try {
      const tokens = async () => [
        ...(await world.api('GET', `/v1/${NS}/tokens/personal`)).body.map((t: { id: string }) => t.id),
        ...(await world.api('GET', `/v1/${NS}/tokens/service`)).body.map((t: { id: string }) => t.id),
      ]
      const before = await tokens()
      for (const kind of ['personal', 'service'])
        for (const expiresAt of ['-1', '2026-02-31', 'tomorrow', '99999-01-01']) {
          await page.goto(`/namespaces/${NS}/tokens`)
          // The value reaches the page through a global: the form callback runs in the page, not here.
          await page.evaluate((value) => ((window as unknown as { badExpiry: string }).badExpiry = value), expiresAt)
          const refused = await submit(page, `/namespaces/${NS}/tokens/${kind}`, (f) => {
            ;(f.querySelector('input[name="name"]') as HTMLInputElement).value = 'bad expiry'
            const expiry = f.querySelector('input[name="expiresAt"]') as HTMLInputElement
            expiry.type = 'text'
            expiry.value = (f.ownerDocument.defaultView as unknown as { badExpiry: string }).badExpiry
          })
          expect(refused, `${kind} token with expiry ${expiresAt}`).toBe(400)
          expect(await page.getByTestId('form-errors').textContent()).toContain('YYYY-MM-DD')
        }
      expect(await tokens()).toEqual(before)
    } finally {
      await context.close()
    }
  })
})

describe('dashboard exception request form', () => {
  it('refuses a duplicate of a pending request (409) with a link to it, and creates nothing', async () => {
    const { context, page } = await signIn(world)
    try {
      const fill = async () => {
        await page.goto(`/namespaces/${NS}/firewalls/${ASKS}/exception-requests/new`)
        await page.getByLabel('Package').fill('is-odd')
        await page.getByLabel('Version').fill('3.0.1')
        await page.getByLabel('Rule').fill('min-age')
        await page.getByLabel('Justification').fill('we need it today')
        const response = page.waitForResponse((r) => r.request().method() === 'POST')
        await page.getByRole('button', { name: 'Request exception' }).click()
        const status = (await response).status()
        await page.waitForLoadState()
        return status
      }
      expect(await fill()).toBe(303)
      const pending = (await world.api('GET', `/v1/${NS}/config/${ASKS}/exception-requests?status=pending`)).body
      expect(pending).toHaveLength(1)
      expect(await fill()).toBe(409)
      const notice = page.getByTestId('duplicate-request')
      expect(await notice.textContent()).toContain(pending[0].id)
      await notice.getByRole('link', { name: pending[0].id }).click()
      await page.waitForURL(`**/firewalls/${ASKS}/exception-requests/${pending[0].id}`)
      expect((await world.api('GET', `/v1/${NS}/config/${ASKS}/exception-requests`)).body).toHaveLength(1)
    } finally {
      await context.close()
    }
  })
})
