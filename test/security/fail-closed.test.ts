import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wheel } from '../fixtures/ecosystems/packages'
import { send, startLoopback, type Loopback } from '../support/loopback'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'

/**
 * Finding 7, facts a rule needs: when fetching a fact a rule needs fails
 * (5xx, reset, an unreadable answer, 429), the download is refused 503/502 naming the fact,
 * never served. A fact the upstream simply does not have (404: no JSON API) is missing and the
 * rule's own semantics decide. Before the fix a deny-list license rule let the package through
 * whenever the PyPI JSON API failed.
 */

const TOKEN = 'fwp_failClosedOwnerToken0123456789abcdefghi'
const NS = 'default'
const LOOPBACK_UPSTREAMS = { UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' }

/** How the upstream's JSON API (`/pypi/{name}/{version}/json`) answers, per project. */
type JsonApi = { license: string } | 'status-500' | 'status-429' | 'status-404' | 'not-json' | 'reset'

const PROJECTS: Record<string, JsonApi> = {
  'fc-gpl': { license: 'GPL-3.0-only' },
  'fc-mit': { license: 'MIT' },
  'fc-down': 'status-500',
  'fc-busy': 'status-429',
  'fc-none': 'status-404',
  'fc-garbled': 'not-json',
  'fc-reset': 'reset',
}

const files = new Map(Object.keys(PROJECTS).map((name) => [name, wheel(name, '1.0')]))
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** A PyPI upstream whose simple index and files always work; only the JSON API varies. */
function pypiUpstream(): Promise<Loopback> {
  return startLoopback((req, res, url) => {
    const page = /^\/simple\/([^/]+)\/$/.exec(url.pathname)?.[1]
    if (page && files.has(page)) {
      const file = files.get(page)!
      const doc = {
        meta: { 'api-version': '1.1' },
        name: page,
        files: [
          {
            filename: file.filename,
            url: `/files/${file.filename}`,
            hashes: { sha256: sha256(file.bytes) },
            'upload-time': '2020-01-01T00:00:00Z',
          },
        ],
      }
      return send(res, 200, JSON.stringify(doc), 'application/vnd.pypi.simple.v1+json')
    }
    const download = [...files.values()].find((f) => url.pathname === `/files/${f.filename}`)
    if (download) return send(res, 200, download.bytes, 'application/octet-stream')
    const api = /^\/pypi\/([^/]+)\/1\.0\/json$/.exec(url.pathname)?.[1]
    const mode = api ? PROJECTS[api] : undefined
    if (!mode) return send(res, 404, 'not found')
    if (typeof mode === 'object')
      return send(
        res,
        200,
        JSON.stringify({ info: { name: api, version: '1.0', license_expression: mode.license } }),
        'application/json',
      )
    if (mode === 'reset') return void req.socket.destroy()
    if (mode === 'not-json') return send(res, 200, '<html>maintenance</html>', 'application/json')
    send(res, Number(mode.slice('status-'.length)), 'no', 'text/plain')
  })
}

let upstream: Loopback
let server: RunningServer
let api: Api
let licenseSet: string

const basic = { authorization: `Basic ${Buffer.from(`__token__:${TOKEN}`).toString('base64')}` }
const download = (srv: RunningServer, fw: string, project: string) =>
  fetch(`${srv.url}/registry/${NS}/${fw}/files/${project}/${files.get(project)!.filename}`, { headers: basic })

async function putFirewall(client: Api, id: string, rules: unknown[]) {
  const response = await client('PUT', `/v1/${NS}/config/${id}`, {
    ecosystem: 'pypi',
    upstreams: [{ id: 'py', endpoint: upstream.url }],
    rules,
  })
  expect(response.status, JSON.stringify(response.body)).toBeLessThan(300)
}

beforeAll(async () => {
  upstream = await pypiUpstream()
  server = await startServer({ BOOTSTRAP_TOKEN: TOKEN, ...LOOPBACK_UPSTREAMS })
  api = apiClient(server.url, TOKEN)
  const set = await api('POST', `/v1/${NS}/license-sets`, { name: 'copyleft', licenses: ['GPL-3.0-only'] })
  expect(set.status).toBe(201)
  licenseSet = set.body.id
  const license = (mode: 'allow' | 'deny') => ({
    id: `license-${mode}`,
    executionPhase: 'download',
    selector: { function: { name: 'license', licenseSet, mode } },
    description: `${mode} list`,
  })
  await putFirewall(api, 'deny', [license('deny')])
  await putFirewall(api, 'allow', [license('allow')])
  await putFirewall(api, 'plain', [
    { id: 'names', executionPhase: 'download', selector: { function: { name: 'packageName', patterns: ['evil-*'] } } },
  ])
}, 120_000)
afterAll(async () => {
  await server?.stop()
  await upstream?.close()
})

const decisions = async (fw: string, project: string) =>
  (await api('GET', `/v1/${NS}/config/${fw}/log?packageName=${project}`)).body as { blocked: boolean }[]

describe('a license rule whose license lookup fails', () => {
  it.each([
    ['fc-down', 503, 'status 500'],
    ['fc-busy', 503, 'status 429'],
    ['fc-reset', 503, 'upstream py'],
    ['fc-garbled', 502, 'not JSON'],
  ])('refuses %s with %i naming the license, and serves nothing', async (project, status, reason) => {
    const response = await download(server, 'deny', project)
    expect(response.status).toBe(status)
    const body = await response.text()
    const { error } = JSON.parse(body) as { error: string }
    expect(error).toContain(`the license of ${project} 1.0`)
    expect(error).toContain(reason)
    // pip prints the status line: the reason phrase names it too.
    expect(response.statusText).toContain('license')
    if (status === 503) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(body).not.toContain('PK')
    // No decision was taken on a guess: no decision in the firewall log, only the failed call.
    expect(await decisions('deny', project)).toEqual([])
    const requestId = response.headers.get('x-request-id')
    const log = (await api('GET', `/v1/${NS}/config/deny/log?limit=100`)).body as Record<string, unknown>[]
    expect(log.filter((entry) => entry.request === requestId)).toEqual([
      expect.objectContaining({ outcome: 'upstream_error', blocked: false, upstream: 'py', request: requestId }),
    ])
  })
})

describe('a license rule whose license is there, or simply missing', () => {
  it('blocks a denied license and serves an allowed one', async () => {
    expect((await download(server, 'deny', 'fc-gpl')).status).toBe(403)
    const mit = await download(server, 'deny', 'fc-mit')
    expect(mit.status).toBe(200)
    expect(Buffer.from(await mit.arrayBuffer())).toEqual(files.get('fc-mit')!.bytes)
  })

  it('lets the rule decide about a license the upstream does not have (404): deny-list serves, allow-list blocks', async () => {
    expect((await download(server, 'deny', 'fc-none')).status).toBe(200)
    const allow = await download(server, 'allow', 'fc-none')
    expect(allow.status).toBe(403)
    expect((await allow.json()).error).toContain('license none is not allowed')
  })

  it('does not even ask for the license when no rule needs it', async () => {
    for (const project of ['fc-down', 'fc-garbled', 'fc-reset'])
      expect((await download(server, 'plain', project)).status).toBe(200)
  })
})

describe('advisory data that cannot be read', () => {
  let noData: RunningServer
  beforeAll(async () => {
    // ADVISORY_DIR names a directory that does not exist (yet).
    const dir = join(mkdtempSync(join(tmpdir(), 'pf-adv-')), 'missing')
    noData = await startServer({ BOOTSTRAP_TOKEN: TOKEN, ADVISORY_DIR: dir, ...LOOPBACK_UPSTREAMS })
    const client = apiClient(noData.url, TOKEN)
    await putFirewall(client, 'malware', [
      { id: 'no-malware', executionPhase: 'download', selector: { function: { name: 'malware' } } },
    ])
    await putFirewall(client, 'plain', [
      {
        id: 'names',
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: ['evil-*'] } },
      },
    ])
  }, 120_000)
  afterAll(async () => {
    await noData?.stop()
  })

  it('refuses downloads a malware rule decides with 503 naming the advisory data, and leaves other firewalls alone', async () => {
    const refused = await download(noData, 'malware', 'fc-mit')
    expect(refused.status).toBe(503)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    const { error } = (await refused.json()) as { error: string }
    expect(error).toContain('advisory data')
    // The operator's directory path is not told to clients.
    expect(error).not.toContain('pf-adv-')
    expect((await download(noData, 'plain', 'fc-mit')).status).toBe(200)
  })
})
