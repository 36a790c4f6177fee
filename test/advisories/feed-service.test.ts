import { createHash } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { send, startLoopback, type Loopback } from '../support/loopback'
import { fixtureRecords, malRecord, osvZip, startOsvFeed, type OsvFeed } from '../support/osv-feed'
import { redisUrl, uniquePrefix } from '../support/redis'
import { apiClient, freePort, startServer, type Api, type RunningServer } from '../support/server'
import { waitFor } from '../support/wait-for'

/**
 * Issue 16 through the built server: the OSV feed (a local bucket serving zips of the fixtures with
 * ETags) keeps vulnerability and malware rules supplied, refreshes every ADVISORY_REFRESH, survives a
 * corrupt archive, reports itself in GET /v1/{ns}/advisories/status and the metrics, and a feed that is
 * down at start makes the rules fail closed. Waits are for positive signals (the status answer), never
 * fixed sleeps.
 */

const TOKEN = 'fwp_advisoryFeedOwnerToken0123456789abcdefgh'
const NS = 'default'
const LOOPBACK = { UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' }
const npmRecords = fixtureRecords('npm')

/** An npm registry holding one tarball per name and version. */
function npmUpstream(packages: Record<string, string[]>): Promise<Loopback> {
  const tarball = (name: string, version: string) => gzipSync(Buffer.from(`${name}@${version}`))
  const integrity = (bytes: Buffer) => `sha512-${createHash('sha512').update(bytes).digest('base64')}`
  let origin = ''
  const started = startLoopback((_req, res, url) => {
    const path = decodeURIComponent(url.pathname.slice(1))
    const file = /^(.+)\/-\/[^/]+-(\d[^/]*)\.tgz$/.exec(path)
    if (file && packages[file[1]]?.includes(file[2])) {
      return send(res, 200, tarball(file[1], file[2]), 'application/octet-stream')
    }
    const versions = packages[path]
    if (!versions) return send(res, 404, '{"error":"not found"}', 'application/json')
    const doc = {
      name: path,
      'dist-tags': { latest: versions.at(-1) },
      time: Object.fromEntries(versions.map((v) => [v, '2020-01-01T00:00:00.000Z'])),
      versions: Object.fromEntries(
        versions.map((v) => {
          const dist = {
            tarball: `${origin}/${path}/-/${path.split('/').pop()}-${v}.tgz`,
            integrity: integrity(tarball(path, v)),
          }
          return [v, { name: path, version: v, dist }]
        }),
      ),
    }
    send(res, 200, JSON.stringify(doc), 'application/json')
  })
  return started.then((loopback) => ((origin = loopback.url), loopback))
}

const PACKAGES = {
  'flatmap-stream': ['0.1.1'],
  lodash: ['4.17.11', '4.17.21'],
  'fresh-evil': ['1.0.0'],
  'left-pad': ['1.3.0'],
}

async function guardedFirewall(api: Api, upstream: string, id = 'guard') {
  const rules = [
    { id: 'no-malware', executionPhase: 'download', selector: { function: { name: 'malware' } } },
    {
      id: 'no-high-vulns',
      executionPhase: 'download',
      selector: { function: { name: 'vulnerability', minSeverity: 'high' } },
    },
  ]
  const put = await api('PUT', `/v1/${NS}/config/${id}`, { upstreams: [{ id: 'npm', endpoint: upstream }], rules })
  expect(put.status).toBeLessThan(300)
  const plain = await api('PUT', `/v1/${NS}/config/plain`, {
    upstreams: [{ id: 'npm', endpoint: upstream }],
    rules: [],
  })
  expect(plain.status).toBeLessThan(300)
}

function tarball(server: RunningServer, fw: string, name: string, version: string) {
  const url = `${server.url}/registry/${NS}/${fw}/${name}/-/${name}-${version}.tgz`
  return fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })
}

interface EcosystemStatus {
  ecosystem: string
  source: string
  loaded: boolean
  records: number
  lastRefresh: string | null
  lastChange: string | null
  lastError: { message: string } | null
  stale: boolean
}

async function npmStatus(api: Api): Promise<EcosystemStatus> {
  const res = await api('GET', `/v1/${NS}/advisories/status`)
  expect(res.status).toBe(200)
  return (res.body.ecosystems as EcosystemStatus[]).find((e) => e.ecosystem === 'npm')!
}

/** Polls the status until `done` holds; fails after `ms`. */
async function until(api: Api, done: (status: EcosystemStatus) => boolean, ms = 20_000): Promise<EcosystemStatus> {
  const deadline = Date.now() + ms
  for (;;) {
    const status = await npmStatus(api)
    if (done(status)) return status
    if (Date.now() > deadline) throw new Error(`advisory status never got there: ${JSON.stringify(status)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('the OSV feed, kept fresh', () => {
  let feed: OsvFeed
  let upstream: Loopback
  let server: RunningServer
  let api: Api

  beforeAll(async () => {
    feed = await startOsvFeed({ npm: osvZip(npmRecords) })
    upstream = await npmUpstream(PACKAGES)
    // 1 s: a refresh is fresh for 3 s. At 500ms, a run of the whole suite at load average 12 saw no
    // fresh status for 20 s: each refresh is dated at its start, and took longer than 1.5 s there.
    const env = { BOOTSTRAP_TOKEN: TOKEN, ADVISORY_FEED_URL: feed.url, ADVISORY_REFRESH: '1s', ...LOOPBACK }
    server = await startServer(env)
    api = apiClient(server.url, TOKEN)
    await guardedFirewall(api, upstream.url)
    await until(api, (s) => s.loaded)
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
    await upstream?.close()
    await feed?.close()
  })

  it('reads the feed on its loader thread', () => {
    expect(server.output()).not.toContain('no advisory loader thread')
  })

  it('reports where the data comes from, how much and how fresh', async () => {
    // Fresh means refreshed within 3 refresh periods (3 s here); on a loaded machine a refresh can
    // run late, so wait for a fresh reading (a broken refresh never gives one) rather than assume it.
    let status = await npmStatus(api)
    await waitFor(async () => !(status = await npmStatus(api)).stale, 20_000, 'a fresh status')
    expect(status).toMatchObject({ source: 'feed', loaded: true, records: 29, lastError: null, stale: false })
    expect(Date.parse(status.lastRefresh!)).toBeGreaterThan(Date.now() - 60_000)
    const res = await api('GET', `/v1/${NS}/advisories/status`)
    expect(res.body.feed).toEqual({ enabled: true, refresh: '1s' })
    // Only ecosystems some firewall uses are downloaded.
    expect(feed.requests.some((r) => r.path !== '/npm/all.zip')).toBe(false)
  })

  it('blocks a known malicious package and explains the block with the advisory and its link', async () => {
    const blocked = await tarball(server, 'guard', 'flatmap-stream', '0.1.1')
    expect(blocked.status).toBe(403)
    const { error } = (await blocked.json()) as { error: string }
    expect(error).toContain('MAL-2022-1142')
    expect(error).toContain('https://osv.dev/vulnerability/MAL-2022-1142')
    expect((await tarball(server, 'plain', 'flatmap-stream', '0.1.1')).status).toBe(200)
  })

  it('names the first vulnerability and the count in the 403, and lists every advisory in the log output', async () => {
    const blocked = await tarball(server, 'guard', 'lodash', '4.17.11')
    expect(blocked.status).toBe(403)
    const { error } = (await blocked.json()) as { error: string }
    expect(error).toContain(
      '3 known vulnerabilities, first GHSA-35jh-r3h4-6jhm (high) Command Injection in lodash, ' +
        'https://osv.dev/vulnerability/GHSA-35jh-r3h4-6jhm',
    )
    const log = await api('GET', `/v1/${NS}/config/guard/log?packageName=lodash`)
    const output = log.body[0].output as {
      advisories: { id: string; severity: string; summary: string; url: string }[]
    }
    const ids = output.advisories.map((a) => a.id).sort()
    expect(ids).toEqual(['GHSA-35jh-r3h4-6jhm', 'GHSA-jf85-cpcp-j695', 'GHSA-p6mc-m468-83gw'])
    const linked = output.advisories.every(
      (a) => a.url === `https://osv.dev/vulnerability/${a.id}` && a.summary && a.severity,
    )
    expect(linked).toBe(true)
    expect((await tarball(server, 'guard', 'lodash', '4.17.21')).status).toBe(200)
  })

  it('answers an unchanged feed with one conditional request and no reload', async () => {
    const before = await npmStatus(api)
    const downloads = feed.downloads('npm')
    const after = await until(api, (s) => s.lastRefresh !== before.lastRefresh)
    expect(feed.downloads('npm')).toBe(downloads)
    expect(after.lastChange).toBe(before.lastChange)
    const last = feed.requests.at(-1)!
    expect([last.status, last.ifNoneMatch]).toEqual([304, expect.stringMatching(/^"[0-9a-f]+"$/)])
  })

  it('blocks a newly published MAL- record within one refresh', async () => {
    expect((await tarball(server, 'guard', 'fresh-evil', '1.0.0')).status).toBe(200)
    const before = await npmStatus(api)
    feed.publish('npm', osvZip([...npmRecords, malRecord('MAL-2025-7001', 'npm', 'fresh-evil')]))
    const published = Date.now()
    const after = await until(api, (s) => s.lastChange !== before.lastChange)
    // One refresh is 1 s; loading 30 records takes milliseconds.
    expect(Date.now() - published).toBeLessThan(5_000)
    expect(after.records).toBe(30)
    const blocked = await tarball(server, 'guard', 'fresh-evil', '1.0.0')
    expect(blocked.status).toBe(403)
    expect(((await blocked.json()) as { error: string }).error).toContain('MAL-2025-7001')
  })

  it('keeps the old index when the archive is corrupt and reports the error', async () => {
    const good = osvZip([...npmRecords, malRecord('MAL-2025-7001', 'npm', 'fresh-evil')])
    feed.publish('npm', good.subarray(0, good.length - 200))
    const failed = await until(api, (s) => s.lastError !== null)
    expect(failed.lastError!.message).toMatch(/zip/)
    expect(failed).toMatchObject({ loaded: true, records: 30, source: 'feed' })
    expect((await tarball(server, 'guard', 'fresh-evil', '1.0.0')).status).toBe(403)
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    expect(metrics).toMatch(/advisory_refresh_error\{ecosystem="npm"\} 1/)
    expect(metrics).toMatch(/advisory_records\{ecosystem="npm"\} 30/)

    feed.publish('npm', good)
    await until(api, (s) => s.lastError === null)
    const healed = await (await fetch(`${server.url}/metrics`)).text()
    expect(healed).toMatch(/advisory_refresh_error\{ecosystem="npm"\} 0/)
    expect(healed).toMatch(/advisory_data_loaded\{ecosystem="npm"\} 1/)
  })
})

describe('a feed that is down at start', () => {
  let upstream: Loopback
  let server: RunningServer
  let api: Api

  beforeAll(async () => {
    upstream = await npmUpstream(PACKAGES)
    // Nothing listens there: every download attempt is refused.
    const dead = `http://127.0.0.1:${await freePort()}`
    const env = { BOOTSTRAP_TOKEN: TOKEN, ADVISORY_FEED_URL: dead, ADVISORY_REFRESH: '500ms', ...LOOPBACK }
    server = await startServer(env)
    api = apiClient(server.url, TOKEN)
    await guardedFirewall(api, upstream.url)
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
    await upstream?.close()
  })

  it('says why in the status', async () => {
    const status = await until(api, (s) => s.lastError !== null)
    expect(status).toMatchObject({ loaded: false, records: 0, source: 'none', stale: true })
    expect(status.lastError!.message).toBe('feed unreachable (ECONNREFUSED)')
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    expect(metrics).toMatch(/advisory_data_loaded\{ecosystem="npm"\} 0/)
  })

  it('makes advisory rules fail closed, naming the ecosystem, and leaves other firewalls alone', async () => {
    const refused = await tarball(server, 'guard', 'left-pad', '1.3.0')
    expect(refused.status).toBe(503)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    const { error } = (await refused.json()) as { error: string }
    expect(error).toContain('advisory data for npm is not loaded (feed: feed unreachable (ECONNREFUSED))')
    expect(error).not.toContain('127.0.0.1')
    expect((await tarball(server, 'plain', 'left-pad', '1.3.0')).status).toBe(200)
  })
})

describe('several processes on one Redis', () => {
  let feed: OsvFeed
  let servers: RunningServer[] = []

  beforeAll(async () => {
    feed = await startOsvFeed({ npm: osvZip(npmRecords) })
    const storage = { REDIS_URL: await redisUrl(), REDIS_PREFIX: uniquePrefix('feed') }
    // Processes look for a stored snapshot every min(ADVISORY_REFRESH, 15s).
    const env = { BOOTSTRAP_TOKEN: TOKEN, ...storage, ADVISORY_FEED_URL: feed.url, ADVISORY_REFRESH: '2s', ...LOOPBACK }
    const first = await startServer(env)
    const api = apiClient(first.url, TOKEN)
    const created = await api('PUT', `/v1/${NS}/config/guard`, {
      upstreams: [{ id: 'npm', endpoint: 'https://registry.npmjs.org' }],
    })
    expect(created.status).toBe(201)
    servers = [first, await startServer(env), await startServer(env)]
  }, 120_000)
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await feed?.close()
  })

  it('downloads the feed once; the others load the stored snapshot', async () => {
    for (const server of servers) await until(apiClient(server.url, TOKEN), (s) => s.loaded && s.records === 29)
    expect(feed.downloads('npm')).toBe(1)
  })
})
