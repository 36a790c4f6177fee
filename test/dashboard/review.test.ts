import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NS, requestException, seedFirewall, signIn, startWorld, type World } from './harness'

/** The reviewer: approving from fields (as proposed or edited), and a paged history with the diff on top. */

let world: World
beforeAll(async () => {
  world = await startWorld()
  await seedFirewall(world.api, 'main')
})
afterAll(async () => world?.close())

const exceptionsOf = async () => (await world.api('GET', `/v1/${NS}/config/main`)).body.exceptions as { id: string }[]

describe('dashboard: approving from fields', () => {
  it('shows the proposal as fields and, unchanged, approves it exactly as proposed', async () => {
    const proposal = {
      id: 'ex-chalk',
      rule: 'min-age',
      selector: { packageName: 'chalk', version: '5.3.0' },
      expires: '2030-12-31T23:30:00Z',
      reason: 'no_alternative',
      notes: 'needed by the CLI',
    }
    const created = await world.api('POST', `/v1/${NS}/config/main/exception-requests`, {
      proposedException: proposal,
      justification: 'CLI colours',
    })
    expect(created.status).toBe(201)
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/exception-requests/${created.body.id}`)
    expect(await page.locator('#approve textarea[name="exception"]').count()).toBe(0)
    expect(await page.getByLabel('Name on the firewall').inputValue()).toBe('ex-chalk')
    expect(await page.getByLabel('Rule it applies to').inputValue()).toBe('min-age')
    expect(await page.getByLabel('Package name').inputValue()).toBe('chalk')
    expect(await page.getByLabel('Package version').inputValue()).toBe('5.3.0')
    expect(await page.getByLabel('Expires (UTC)').inputValue()).toBe('2030-12-31T23:30')
    expect(await page.getByLabel('Reason').inputValue()).toBe('no_alternative')
    expect(await page.getByLabel('Notes').inputValue()).toBe('needed by the CLI')
    await page.getByRole('button', { name: 'Approve and add exception' }).click()
    expect(await page.getByRole('status').first().textContent()).toContain('Approved as proposed')
    const added = (await exceptionsOf()).find((ex) => ex.id === 'ex-chalk')
    expect(added).toEqual({ ...proposal, log: true })
    await context.close()
  })

  it('approves an edited exception, and shows a refused one’s errors next to its fields', async () => {
    const request = await requestException(world.api, 'main', 'debug', 'ex-debug')
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/exception-requests/${request.id}`)
    // An id already on the firewall: refused (409 in the API), nothing changes, the edit is kept.
    await page.getByLabel('Name on the firewall').fill('ex-chalk')
    await page.getByLabel('Package version').fill('4.3.4')
    const response = page.waitForResponse((r) => r.request().method() === 'POST')
    await page.getByRole('button', { name: 'Approve and add exception' }).click()
    expect((await response).status()).toBe(409)
    expect(await page.getByTestId('form-errors').textContent()).toContain('ex-chalk')
    expect(await page.getByLabel('Package version').inputValue()).toBe('4.3.4')
    // An invalid expiry: next to the field.
    await page.getByLabel('Name on the firewall').fill('ex-debug-4')
    await page.getByLabel('Package name').fill('')
    await page.getByRole('button', { name: 'Approve and add exception' }).click()
    expect(await page.locator('#f-packageName-err').isVisible()).toBe(true)
    expect(await page.getByTestId('request-status').textContent()).toContain('pending')
    await page.getByLabel('Package name').fill('debug')
    await page.getByRole('button', { name: 'Approve and add exception' }).click()
    expect(await page.getByRole('status').first().textContent()).toContain('Approved with your changes')
    const added = (await exceptionsOf()).find((ex) => ex.id === 'ex-debug-4')
    expect(added).toMatchObject({ rule: 'min-age', selector: { packageName: 'debug', version: '4.3.4' } })
    expect((await world.api('GET', `/v1/${NS}/config/main/exception-requests/${request.id}`)).body).toMatchObject({
      status: 'approved',
      exceptionId: 'ex-debug-4',
    })
    await context.close()
  })
})

describe('dashboard: history', () => {
  it('pages the version list and shows the chosen diff at the top of the page', async () => {
    for (let i = 0; i < 24; i++) {
      const put = await world.api('PUT', `/v1/${NS}/config/main/rules/r${i}`, {
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: [`p${i}-*`] } },
      })
      expect(put.status).toBe(201)
    }
    const current = (await world.api('GET', `/v1/${NS}/config/main`)).body.version as number
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/main/history`)
    const versions = page.locator('#versions tbody tr')
    expect(await versions.count()).toBe(20)
    expect(await versions.first().textContent()).toContain(`v${current}`)
    // The diff comes first, above the list.
    const diffTop = (await page.locator('#diff').boundingBox())!.y
    expect(diffTop).toBeLessThan((await page.locator('#versions').boundingBox())!.y)
    expect(await page.locator('#diff table.diff').textContent()).toContain('p23-*')

    await page.getByRole('link', { name: 'Older versions' }).click()
    expect(await versions.count()).toBe(current - 20)
    expect(await versions.first().textContent()).toContain(`v${current - 20}`)
    expect(await versions.last().textContent()).toContain('v1')
    // "changes in v6" shows v5 -> v6 at the top and scrolls there.
    await page.getByRole('link', { name: 'changes in v6' }).click()
    // Where the fragment scrolls to depends on the stylesheet's layout: the page's load, not its commit.
    await page.waitForURL((url) => url.searchParams.get('to') === '6' && url.hash === '#diff')
    expect(new URL(page.url()).hash).toBe('#diff')
    expect(await page.getByRole('heading', { name: 'Diff v5 → v6' }).isVisible()).toBe(true)
    expect(await page.locator('#diff table.diff').textContent()).toContain('p2-*')
    expect(await page.evaluate(() => document.getElementById('diff')!.getBoundingClientRect().top)).toBeLessThan(200)
    // The same page of versions is still listed.
    expect(await versions.first().textContent()).toContain(`v${current - 20}`)
    await page.getByRole('link', { name: 'Newer versions' }).click()
    expect(await versions.first().textContent()).toContain(`v${current}`)
    await context.close()
  })
})

describe('content security policy', () => {
  it('was never violated by a page of this suite', () => {
    expect(world.cspViolations).toEqual([])
  })
})
