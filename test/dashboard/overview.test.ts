import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../support/admin'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { wheel } from '../fixtures/ecosystems/packages'
import { pip } from '../ecosystems/pip'
import { apiClient } from '../support/server'
import { NS, signIn, startWorld, type World } from './harness'

/**
 * The namespace home for owners: blocks counted from real pip downloads through a firewall, the
 * pending request a developer filed about one, and the advisory data status. The built server,
 * a PyPI upstream on loopback, real pip and Chromium.
 */

let world: World
let upstream: PypiUpstream
let requestId: string
let blockDay: string

beforeAll(async () => {
  world = await startWorld({ UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', ADVISORY_FEED_URL: 'off' })
  upstream = await startPypiUpstream()
  for (const [name, version] of [
    ['fw-evil', '1.0'],
    ['fw-good', '2.0'],
  ]) {
    const { filename, bytes } = wheel(name, version)
    upstream.add(name, filename, bytes)
  }
  const devToken = await createUser(world.server, 'dev')
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
    permissions: { dev: ['fw:access'] },
  })
  expect(put.status).toBe(201)
  const index = `${world.server.url}/registry/${NS}/py/`
  // Two blocked downloads and one served: the overview counts only the blocks.
  for (let i = 0; i < 2; i++) expect((await pip(index, devToken, ['download', 'fw-evil==1.0'])).code).not.toBe(0)
  expect((await pip(index, devToken, ['download', 'fw-good==2.0'])).code).toBe(0)
  const blocked = await world.api('GET', `/v1/${NS}/config/py/log?blocked=true`)
  const request = (blocked.body as { request: string }[])[0].request
  blockDay = (blocked.body as { time: string }[])[0].time.slice(0, 10)
  const devApi = apiClient(world.server.url, devToken)
  const created = await devApi('POST', `/v1/${NS}/config/py/exception-requests`, {
    proposedException: { id: 'ex-fw-evil', rule: 'dl-block', selector: { packageName: 'fw-evil', version: '1.0' } },
    justification: `Needed for the build (${request})`,
  })
  expect(created.status).toBe(201)
  requestId = (created.body as { id: string }).id
}, 180_000)

afterAll(async () => {
  await world?.close()
  await upstream?.close()
})

describe('the owner overview at the namespace home', () => {
  it('shows pending requests, blocks per day, the most blocked packages and the advisory status', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview')
    expect(await page.getByRole('link', { name: 'Overview' }).getAttribute('aria-current')).toBe('page')

    const pending = page.locator('#pending')
    expect(await pending.locator('h2').textContent()).toBe('Pending exception requests (1)')
    const link = pending.getByRole('link', { name: requestId })
    expect(await link.getAttribute('href')).toBe(`/namespaces/${NS}/firewalls/py/exception-requests/${requestId}`)

    // The chart: one series per firewall, today's bar holding both blocks.
    const blocks = page.locator('#blocks')
    expect(await blocks.locator('figcaption').textContent()).toMatch(/py\s*2/)
    // The day the blocks were logged, not the test's clock: a run across midnight stays right.
    expect(await blocks.locator('svg.chart rect title').allTextContents()).toEqual([`${blockDay}T00:00:00.000Z py: 2`])
    const row = blocks.locator('tbody tr', { hasText: 'py' })
    expect(await row.locator('td').nth(1).textContent()).toBe('2')
    expect(await row.locator('td').nth(2).textContent()).toBe('2')
    expect(await blocks.getByTestId('blocks-partial').count()).toBe(0)

    const top = page.locator('#top-blocked tbody tr')
    expect(await top.count()).toBe(1)
    expect(await top.locator('td').first().textContent()).toBe('fw-evil')
    expect(await top.locator('td').nth(2).textContent()).toBe('2')
    expect(await top.getByRole('link', { name: 'py' }).getAttribute('href')).toBe(
      `/namespaces/${NS}/firewalls/py/log?blocked=true&packageName=fw-evil`,
    )

    // Only the ecosystems the namespace's firewalls use; the feed is off here.
    const advisories = page.locator('#advisories')
    expect(await advisories.locator('tbody tr').count()).toBe(1)
    expect(await advisories.locator('tbody tr td').first().textContent()).toBe('pypi')
    expect(await advisories.textContent()).toContain('The feed is off')
    expect(world.cspViolations).toEqual([])
    await context.close()
  })
})
