import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Download } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../support/admin'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { wheel } from '../fixtures/ecosystems/packages'
import { pip } from '../ecosystems/pip'
import { cyclonedx15Validator } from '../support/cyclonedx'
import { NS, eventually, signIn, startWorld, type World } from './harness'

/** A downloaded file's JSON; saveAs, not path(): the run's shared Chromium keeps downloads remotely. */
async function downloaded(download: Download): Promise<{ bomFormat?: string; [key: string]: unknown }> {
  const saved = join(mkdtempSync(join(tmpdir(), 'pf-sbom-')), download.suggestedFilename())
  await download.saveAs(saved)
  return JSON.parse(readFileSync(saved, 'utf8'))
}

/**
 * A firewall's inventory, its SBOM and the exposures advisory data finds in it, in the dashboard:
 * versions served to real pip through a PyPI upstream on loopback, then a `MAL-` record written
 * into ADVISORY_DIR (which the server reloads and matches against what it served). The built
 * server and Chromium.
 */

let world: World
let upstream: PypiUpstream
let advisoryDir: string
const PACKAGES = [
  ['fw-good', '2.0'],
  ['fw-other', '1.1'],
  ['fw-third', '3.0'],
] as const

beforeAll(async () => {
  advisoryDir = mkdtempSync(join(tmpdir(), 'pf-dash-advisories-'))
  world = await startWorld({
    UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    ADVISORY_FEED_URL: 'off',
    ADVISORY_DIR: advisoryDir,
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
  })
  upstream = await startPypiUpstream()
  for (const [name, version] of PACKAGES) {
    const { filename, bytes } = wheel(name, version)
    upstream.add(name, filename, bytes)
  }
  const devToken = await createUser(world.server, 'dev')
  const put = await world.api('PUT', `/v1/${NS}/config/py`, {
    ecosystem: 'pypi',
    upstreams: [{ id: 'pypi-local', endpoint: upstream.url }],
    rules: [],
    permissions: { dev: ['fw:access'] },
  })
  expect(put.status).toBe(201)
  for (const [name, version] of PACKAGES) {
    const result = await pip(`${world.server.url}/registry/${NS}/py/`, devToken, ['download', `${name}==${version}`])
    expect(result.code, result.output).toBe(0)
  }
  // Served versions are written after a short coalescing delay.
  await eventually(
    async () => ((await world.api('GET', `/v1/${NS}/config/py/inventory`)).body as unknown[]).length === 3,
    20_000,
    'three served versions in the inventory',
  )
}, 180_000)

afterAll(async () => {
  await world?.close()
  await upstream?.close()
})

describe('the inventory page', () => {
  it('lists what the firewall served, searches by package name and pages', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/py`)
    await page.getByRole('link', { name: 'Inventory', exact: true }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Inventory of py')
    const rows = page.locator('#served tbody tr')
    expect(await rows.count()).toBe(3)
    const good = rows.filter({ hasText: 'fw-good' })
    expect(await good.locator('td').nth(1).textContent()).toBe('2.0')
    expect(await good.locator('td').nth(4).textContent()).toBe('1')
    expect(await good.locator('td').nth(5).textContent()).toContain('dev')

    await page.getByRole('searchbox', { name: 'Package' }).fill('fw-other')
    await page.getByRole('button', { name: 'Search' }).click()
    expect(await rows.count()).toBe(1)
    expect(await rows.locator('td').first().textContent()).toBe('fw-other')

    // Paging: the page size is 50, so a cursor from the API stands in for a long inventory.
    const first = await world.api('GET', `/v1/${NS}/config/py/inventory?limit=1`)
    const cursor = /cursor=([^&>]+)/.exec(String(first.headers.get('link')))![1]
    await page.goto(`/namespaces/${NS}/firewalls/py/inventory?cursor=${cursor}`)
    expect(await rows.count()).toBe(2)
    expect(await page.getByRole('link', { name: '← First page' }).count()).toBe(1)
    await context.close()
  })

  it('downloads the SBOM of a period as CycloneDX JSON with the served components', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/firewalls/py/inventory`)
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download SBOM' }).click(),
    ])
    expect(download.suggestedFilename()).toMatch(/^py-sbom.*\.cdx\.json$/)
    const bom = await downloaded(download)
    expect(bom.bomFormat).toBe('CycloneDX')
    expect(bom.specVersion).toBe('1.5')
    expect(cyclonedx15Validator()(bom)).toEqual([])
    const purls = (bom.components as { purl: string }[]).map((c) => c.purl).sort()
    expect(purls).toEqual(['pkg:pypi/fw-good@2.0', 'pkg:pypi/fw-other@1.1', 'pkg:pypi/fw-third@3.0'])

    // A period in which nothing was served: a document without components.
    await page.getByLabel('Since (UTC day)').fill('2099-01-01')
    await page.getByLabel('Until (UTC day)').fill('')
    const [later] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download SBOM' }).click(),
    ])
    expect(later.suggestedFilename()).toBe('py-sbom-2099-01-01-now.cdx.json')
    const empty = await downloaded(later)
    expect(empty.bomFormat).toBe('CycloneDX')
    expect(empty.components ?? []).toEqual([])
    await context.close()
  })
})

describe('exposures', () => {
  beforeAll(async () => {
    const record = {
      id: 'MAL-2026-9001',
      modified: '2026-11-26T00:00:00Z',
      summary: 'Malicious code in fw-good (PyPI)',
      aliases: ['GHSA-xxxx-yyyy-zzzz'],
      affected: [{ package: { ecosystem: 'PyPI', name: 'fw-good' }, versions: ['2.0'] }],
    }
    writeFileSync(join(advisoryDir, 'MAL-2026-9001.json'), JSON.stringify(record))
    await eventually(
      async () => ((await world.api('GET', `/v1/${NS}/exposures?status=open`)).body as unknown[]).length === 1,
      30_000,
      'the exposure the new record causes',
    )
  }, 60_000)

  it('shows the open exposure on the overview and acknowledges it with a comment, audited', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}`)
    const open = page.locator('#open-exposures')
    expect(await open.locator('h2').textContent()).toBe('Open exposures (1)')
    expect(await open.locator('tbody tr td').nth(2).textContent()).toContain('fw-good@2.0')
    await open.getByRole('link', { name: /All exposures/ }).click()

    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Exposures')
    const row = page.locator('#exposures tbody tr')
    expect(await row.count()).toBe(1)
    expect(await row.textContent()).toContain('MAL-2026-9001')
    expect(await row.textContent()).toContain('malware')
    expect(await row.locator('td').nth(5).textContent()).toContain('dev')
    await row.getByLabel(/Comment on/).fill('Rebuilt every image that pulled it')
    await row.getByRole('button', { name: 'Acknowledge' }).click()
    expect(await page.locator('.flash.ok').textContent()).toContain('Acknowledged MAL-2026-9001')
    expect(await page.locator('#exposures').textContent()).toContain('No open exposure.')

    await page.getByRole('link', { name: 'acknowledged', exact: true }).click()
    expect(await row.textContent()).toContain('Rebuilt every image that pulled it')
    expect(await row.textContent()).toContain('owner')

    const stored = (await world.api('GET', `/v1/${NS}/exposures?status=acknowledged`)).body as { id: string }[]
    expect(stored).toHaveLength(1)
    const audit = (await world.api('GET', `/v1/${NS}/audit?action=exposure.acknowledge`)).body as {
      outcome: string
      resourceId?: string
      actorUserId?: string
    }[]
    expect(audit.filter((e) => e.outcome === 'success' && e.resourceId === stored[0].id)).toHaveLength(1)
    await context.close()
  })

  it('refuses an acknowledgement without the CSRF token and changes nothing', async () => {
    const [exposure] = (await world.api('GET', `/v1/${NS}/exposures`)).body as { id: string; status: string }[]
    const { context, page } = await signIn(world)
    const response = await page.request.post(`/namespaces/${NS}/exposures/${exposure.id}/acknowledge`, {
      form: { comment: 'forged' },
    })
    expect(response.status()).toBe(403)
    const after = (await world.api('GET', `/v1/${NS}/exposures`)).body as { comment?: string }[]
    expect(after[0].comment).not.toBe('forged')
    await context.close()
  })

  it('lists firewall.exposure in the event catalog and the webhook form', async () => {
    const { context, page } = await signIn(world)
    await page.goto(`/namespaces/${NS}/event-types`)
    expect(await page.locator('[data-event-type="firewall.exposure"]').count()).toBe(1)
    const webhook = await world.api('POST', `/v1/${NS}/webhooks`, {
      name: 'Security',
      url: 'http://127.0.0.1:9/hook',
      eventTypes: ['firewall.exposure'],
    })
    expect(webhook.status).toBe(201)
    await page.goto(`/namespaces/${NS}/webhooks/${webhook.body.id}/edit`)
    expect(await page.getByRole('checkbox', { name: 'firewall.exposure', exact: true }).isChecked()).toBe(true)
    expect(world.cspViolations).toEqual([])
    await context.close()
  })
})
