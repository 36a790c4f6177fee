import { mkdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../support/admin'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { wheel } from '../fixtures/ecosystems/packages'
import { pip } from '../ecosystems/pip'
import { NS, signIn, startWorld, type World } from './harness'

/**
 * The developer who hits a block: the block message links the dashboard form, the form is
 * pre-filled from the request id and creates the request in one click plus a justification.
 * Real pip, a PyPI upstream on loopback, the built server and Chromium.
 */

let world: World
let upstream: PypiUpstream
let devToken: string
let otherToken: string
let blockOutput: string

const LINK = new RegExp(
  `http://127\\.0\\.0\\.1:\\d+/namespaces/${NS}/firewalls/py/exception-requests/new\\?request=(req-[A-Za-z0-9_-]+)`,
)

beforeAll(async () => {
  world = await startWorld({ UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' })
  upstream = await startPypiUpstream()
  const { filename, bytes } = wheel('fw-evil', '1.0')
  upstream.add('fw-evil', filename, bytes)
  devToken = await createUser(world.server, 'dev')
  otherToken = await createUser(world.server, 'other')
  const put = await world.api('PUT', `/v1/${NS}/config/py`, {
    ecosystem: 'pypi',
    upstreams: [{ id: 'pypi-local', endpoint: upstream.url }],
    rules: [
      {
        id: 'dl-block',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['fw-evil*'] } },
        description: 'fw-evil* packages are banned',
      },
    ],
    permissions: { dev: ['fw:access'], other: ['fw:access'] },
  })
  expect(put.status).toBe(201)
  const result = await pip(`${world.server.url}/registry/${NS}/py/`, devToken, ['download', 'fw-evil==1.0'])
  expect(result.code).not.toBe(0)
  blockOutput = result.output
})

afterAll(async () => {
  await world?.close()
  await upstream?.close()
})

describe('requesting an exception from a block', () => {
  it('pip prints the link to the form for the blocked request', () => {
    expect(blockOutput).toContain('dl-block')
    expect(blockOutput).toMatch(LINK)
  })

  it('opens the form pre-filled, shows errors next to the field, then creates the request in one click', async () => {
    const link = LINK.exec(blockOutput)!
    const requestId = link[1]
    const { context, page } = await signIn(world, devToken)
    await page.goto(link[0])
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Request an exception')
    expect(await page.locator('#blocked').textContent()).toContain(requestId)
    expect(await page.getByLabel('Package').inputValue()).toBe('fw-evil')
    expect(await page.getByLabel('Version').inputValue()).toBe('1.0')
    expect(await page.getByLabel('Rule').inputValue()).toBe('dl-block')
    expect(await page.getByLabel('Name on the firewall').inputValue()).toBe('ex-fw-evil-1.0')

    // No justification: the form comes back (400) with the message under that field, values kept.
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Request exception' }).click(),
    ])
    expect(refused.status()).toBe(400)
    expect(await page.locator('#justification-error').textContent()).toMatch(/\S/)
    expect(await page.getByLabel('Justification').getAttribute('aria-describedby')).toContain('justification-error')
    expect(await page.getByLabel('Package').inputValue()).toBe('fw-evil')
    mkdirSync('test/artifacts', { recursive: true })
    await page.screenshot({ path: 'test/artifacts/dashboard-exception-form.png', fullPage: true })

    await page.getByLabel('Reason').selectOption('false_positive')
    await page.getByLabel('Justification').fill('The scanner flags our own fork; see ticket SEC-12')
    await page.getByRole('button', { name: 'Request exception' }).click()
    await page.waitForURL(/\/exception-requests\/exr-/)
    expect(await page.getByRole('status').first().textContent()).toContain('created')
    expect(await page.getByTestId('request-status').textContent()).toContain('pending')
    await context.close()

    const list = await world.api('GET', `/v1/${NS}/config/py/exception-requests`)
    expect(list.body).toHaveLength(1)
    expect(list.body[0]).toMatchObject({
      requestedBy: 'dev',
      justification: 'The scanner flags our own fork; see ticket SEC-12',
      proposedException: {
        id: 'ex-fw-evil-1.0',
        rule: 'dl-block',
        selector: { packageName: 'fw-evil', version: '1.0' },
        reason: 'false_positive',
      },
    })
    expect(list.body[0].proposedException.notes).toContain(requestId)
  })

  it("does not pre-fill another user's blocked request for a caller without fw:read", async () => {
    const link = LINK.exec(blockOutput)!
    const { context, page } = await signIn(world, otherToken)
    await page.goto(link[0])
    expect(await page.locator('#blocked').count()).toBe(0)
    expect(await page.getByRole('status').first().textContent()).toContain('No blocked request')
    expect(await page.getByLabel('Package').inputValue()).toBe('')
    await context.close()
  })

  it('refuses a post without the CSRF token and changes nothing', async () => {
    const { context, page } = await signIn(world, devToken)
    await page.goto(`/namespaces/${NS}/firewalls/py/exception-requests/new`)
    const status = await page.evaluate(async (action) => {
      const body = new URLSearchParams({
        packageName: 'fw-evil',
        rule: 'dl-block',
        exceptionId: 'ex-forged',
        justification: 'forged',
      })
      return (
        await fetch(action, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
      ).status
    }, `/namespaces/${NS}/firewalls/py/exception-requests/new`)
    expect(status).toBe(403)
    expect(
      (await world.api('GET', `/v1/${NS}/config/py/exception-requests`)).body.map((r: any) => r.proposedException.id),
    ).not.toContain('ex-forged')
    await context.close()
  })

  it('finds the request by id on the log page, and a blocked row opens the same form', async () => {
    const requestId = LINK.exec(blockOutput)![1]
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/py/log`)
    await page.getByLabel('Request id').fill(requestId)
    await page.getByRole('button', { name: 'Filter' }).click()
    const rows = page.locator('table tbody tr')
    expect(await rows.count()).toBe(1)
    expect(await rows.first().textContent()).toContain('fw-evil')
    await rows.first().getByRole('link', { name: 'Request exception' }).click()
    expect(new URL(page.url()).searchParams.get('request')).toBe(requestId)
    expect(await page.getByLabel('Rule').inputValue()).toBe('dl-block')
    await page.goto(`/namespaces/${NS}/firewalls/py/log?requestId=req-none`)
    expect(await page.locator('table tbody tr').count()).toBe(0)
    await context.close()
  })

  it('never violated the content security policy', () => {
    expect(world.cspViolations).toEqual([])
  })
})
