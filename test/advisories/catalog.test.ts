import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { LocalBackend } from '../../storage'
import { AdvisoryFeedRepository } from '../../storage/repositories/advisory-feed'
import { LeaseRepository } from '../../storage/repositories/leases'
import { createServices } from '../../server/app/services'
import { AdvisoryFeed } from '../../server/advisories/feed-worker'
import { advisoryFeedSettings } from '../../server/advisories/settings'
import { createAdvisoryCatalog, type AdvisoryCatalog } from '../../server/advisories/catalog'
import { RegistryError } from '../../server/registry/responses'
import { advisoryWarning } from '../../server/dashboard/advisory-warning'
import { firewall, rule, sel } from '../firewall/fixtures'
import { fixtureRecords, malRecord, osvZip, startOsvFeed, type OsvFeed } from '../support/osv-feed'

/** ADVISORY_DIR and the feed behind one index: what counts as loaded, the union, fail-closed lookups. */

let feed: OsvFeed
const open: AdvisoryCatalog[] = []
beforeAll(async () => {
  feed = await startOsvFeed({ npm: osvZip(fixtureRecords('npm')) })
})
afterAll(async () => {
  await feed.close()
})
afterEach(async () => {
  for (const catalog of open.splice(0)) await catalog.close()
})

function dirWith(records: Record<string, unknown>[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'pf-adv-cat-'))
  records.forEach((record, i) => writeFileSync(join(dir, `${i}.json`), JSON.stringify(record)))
  return dir
}

/** A catalog as the service builds it; `feedUrl` null turns the feed off. */
async function catalog(options: { feedUrl: string | null; dir?: string }) {
  const env = { ADVISORY_FEED_URL: options.feedUrl ?? 'off', ADVISORY_REFRESH: '1h' }
  const settings = advisoryFeedSettings(env)
  const created = createAdvisoryCatalog({ dir: options.dir, settings })
  open.push(created)
  const backend = new LocalBackend()
  const worker = new AdvisoryFeed({
    repository: new AdvisoryFeedRepository(backend),
    lease: (ecosystem) => new LeaseRepository(backend).advisoryFeed(ecosystem),
    settings,
    clock: { now: () => Date.now() },
    owner: 'test',
    ecosystemsInUse: async () => ['npm'],
  })
  await created.ready
  await created.attach(createServices(backend), { feed: worker })
  return { catalog: created, worker }
}

const lookupError = (catalog: AdvisoryCatalog, ecosystem: 'npm' | 'pypi') => {
  try {
    catalog.current().lookup(ecosystem, 'lodash', '4.17.11')
    return null
  } catch (error) {
    return error as RegistryError
  }
}

describe('advisory catalog', () => {
  it("keeps today's behaviour with the feed off and no directory: no data, nothing blocked, a warning", async () => {
    const { catalog: c } = await catalog({ feedUrl: null })
    expect(c.current().lookup('npm', 'lodash', '4.17.11')).toEqual({ vulnerabilities: [], malware: [] })
    expect(c.status().ecosystems[0]).toMatchObject({ ecosystem: 'npm', source: 'none', loaded: true, stale: true })
  })

  it('fails closed while the feed has loaded nothing, naming the ecosystem and the reason', async () => {
    const { catalog: c, worker } = await catalog({ feedUrl: `${feed.url}/missing` })
    await worker.runPass()
    const error = lookupError(c, 'npm')
    expect(error).toBeInstanceOf(RegistryError)
    expect([error!.status, error!.headers['retry-after']]).toEqual([503, '10'])
    expect(error!.message).toBe(
      'advisory data for npm is not loaded (feed: feed answered 404); ' +
        'a vulnerability or malware rule needs it, retry later',
    )
  })

  it('serves the feed once loaded, and hands out a new index object only when the data changes', async () => {
    const { catalog: c, worker } = await catalog({ feedUrl: feed.url })
    await worker.runPass()
    const first = c.current()
    expect(c.current()).toBe(first)
    expect(first.lookup('npm', 'lodash', '4.17.11').vulnerabilities).toHaveLength(4)
    feed.publish('npm', osvZip([...fixtureRecords('npm'), malRecord('MAL-2025-1', 'npm', 'lodash', ['4.17.11'])]))
    await worker.sync(['npm'])
    expect(c.current()).not.toBe(first)
    expect(
      c
        .current()
        .lookup('npm', 'lodash', '4.17.11')
        .malware.map((a) => a.id),
    ).toEqual(['MAL-2025-1'])
    feed.publish('npm', osvZip(fixtureRecords('npm')))
  })

  it('counts a read ADVISORY_DIR as loaded for every ecosystem while the feed is down', async () => {
    const dir = dirWith([malRecord('MAL-2099-1', 'PyPI', 'evil')])
    const { catalog: c, worker } = await catalog({ feedUrl: `${feed.url}/missing`, dir })
    await worker.runPass()
    expect(lookupError(c, 'npm')).toBeNull()
    expect(
      c
        .current()
        .lookup('pypi', 'evil', '1.0')
        .malware.map((a) => a.id),
    ).toEqual(['MAL-2099-1'])
    const pypi = c.status().ecosystems.find((e) => e.ecosystem === 'pypi')
    expect(pypi).toMatchObject({ source: 'directory', loaded: true, records: 1, stale: true })
  })

  it('looks up the union of directory and feed, the directory first for a shared id', async () => {
    const dir = dirWith([
      { ...malRecord('MAL-2099-2', 'npm', 'lodash'), summary: 'from the directory' },
      { ...fixtureRecords('npm')[0], summary: 'dir copy' },
    ])
    const { catalog: c, worker } = await catalog({ feedUrl: feed.url, dir })
    await worker.runPass()
    const found = c.current().lookup('npm', 'lodash', '4.17.11')
    expect(found.malware.map((a) => a.summary)).toEqual(['from the directory'])
    expect(found.vulnerabilities.map((a) => a.summary).filter((s) => s === 'dir copy')).toHaveLength(1)
    expect(found.vulnerabilities).toHaveLength(4)
    expect(c.status().ecosystems[0]).toMatchObject({ source: 'feed+directory', records: 31, stale: false })
  })

  it('fails closed with an unreadable directory and the feed off', async () => {
    const { catalog: c } = await catalog({ feedUrl: null, dir: join(tmpdir(), 'pf-adv-cat-nonexistent', 'x') })
    const message = lookupError(c, 'pypi')?.message
    expect(message).toContain('advisory data for pypi is not loaded (advisory directory: not readable)')
  })
})

describe('dashboard warning', () => {
  const fw = (rules: ReturnType<typeof rule>[]) => firewall('web', 1, rules)
  // Nested, as a rule may hold it: advisory data is needed all the same.
  const malware = rule('m', sel.not(sel.malware()))
  const names = rule('n', sel.name('x'))

  it('warns a firewall with advisory rules about data that is missing or old, and no other', async () => {
    const { catalog: c } = await catalog({ feedUrl: `${feed.url}/missing` })
    expect(String(advisoryWarning([fw([malware])], c.status()))).toContain('Advisory data for npm is not loaded')
    expect(advisoryWarning([fw([names])], c.status())).toBeNull()
    const { catalog: off } = await catalog({ feedUrl: null })
    expect(String(advisoryWarning([fw([malware])], off.status()))).toContain('No advisory data is configured')
  })

  it('counts advisory rules inherited through extends', async () => {
    const { catalog: c } = await catalog({ feedUrl: `${feed.url}/missing` })
    const base = firewall('base', 1, [malware])
    const child = { ...firewall('child', 1, [names]), extends: ['base'] }
    const warning = String(advisoryWarning([child, base], c.status()))
    expect(warning).toContain('Advisory data for npm is not loaded')
    expect(warning).toContain('rules (including those inherited from base)')
    expect(advisoryWarning([child, firewall('other', 1, [names])], c.status())).toBeNull()
  })

  it('says how old the data is once it is older than 3 x ADVISORY_REFRESH', async () => {
    const { catalog: c, worker } = await catalog({ feedUrl: feed.url })
    await worker.runPass()
    expect(advisoryWarning([fw([malware])], c.status())).toBeNull()
    const status = c.status()
    const lastRefresh = '2020-01-01T00:00:00.000Z'
    const old = { ...status, ecosystems: status.ecosystems.map((e) => ({ ...e, stale: true, lastRefresh })) }
    expect(String(advisoryWarning([fw([malware])], old))).toContain(
      `was last refreshed <time datetime="${lastRefresh}">`,
    )
  })
})
