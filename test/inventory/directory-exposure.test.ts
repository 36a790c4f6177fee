import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { LocalBackend } from '../../storage'
import { createServices } from '../../server/app/services'
import { configFromEnv } from '../../server/app/config'
import { createAdvisoryCatalog } from '../../server/advisories/catalog'
import { advisoryFeedSettings } from '../../server/advisories/settings'
import { ExposureDetector } from '../../server/exposures/detector'
import { eventually } from '../support/wait-for'
import { malRecord } from '../support/osv-feed'

/** An ADVISORY_DIR reload is an advisory change too: its new records are matched against the inventory. */

const NS = 'acme'
const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

describe('an ADVISORY_DIR reload', () => {
  it('turns a new record naming a served version into one exposure, and a reload changing nothing into none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pf-inv-dir-'))
    writeFileSync(join(dir, 'other.json'), JSON.stringify(malRecord('MAL-2099-1', 'npm', 'unrelated')))
    const catalog = createAdvisoryCatalog({ dir, settings: advisoryFeedSettings({ ADVISORY_FEED_URL: 'off' }) })
    closing.push(() => catalog.close())
    await catalog.ready
    const services = createServices(new LocalBackend(), { config: configFromEnv({}), advisories: catalog })
    closing.push(() => services.inventory.close())
    await services.namespaces.create({ id: NS, owner: 'o', createdAt: '2026-01-01T00:00:00.000Z' })
    services.inventory.served({
      ns: NS,
      firewall: 'web',
      ecosystem: 'npm',
      packageName: 'evil',
      version: '1.0.0',
      principal: 'alice',
      at: Date.now(),
    })
    const detector = new ExposureDetector(services)
    closing.push(async () => detector.idle())
    detector.follow(catalog)
    // The detector flushes the inventory before it matches: the served version is not missed.
    writeFileSync(join(dir, 'evil.json'), JSON.stringify(malRecord('MAL-2099-2', 'npm', 'evil', ['1.0.0'])))
    const index = await eventually(() => services.exposures.index(NS), {
      accept: (found) => found.size === 1,
      timeoutMs: 20_000,
      what: 'the exposure',
    })
    const [record] = await services.exposures.getMany(NS, [...index.keys()])
    expect(record).toMatchObject({
      firewall: 'web',
      packageName: 'evil',
      servedTo: ['alice'],
      advisory: { id: 'MAL-2099-2' },
    })

    // Rewriting a file with the same record reloads the directory; nothing new is detected.
    writeFileSync(join(dir, 'evil.json'), JSON.stringify(malRecord('MAL-2099-2', 'npm', 'evil', ['1.0.0'])))
    writeFileSync(join(dir, 'more.json'), JSON.stringify(malRecord('MAL-2099-3', 'npm', 'unrelated-too')))
    await eventually(() => catalog.current().size, { accept: (size) => size === 3, timeoutMs: 20_000 })
    await detector.idle()
    expect((await services.exposures.index(NS)).size).toBe(1)
  })
})
